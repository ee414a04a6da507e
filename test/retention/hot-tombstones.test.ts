import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fromPg, migrate } from '../../src/postgres/index.js';
import { migrations } from '../../src/postgres/migrations/index.js';
import { maintenanceStore } from '../../src/postgres/postgres-maintenance-store.js';
import { Sweeper } from '../../src/retention/sweeper.js';
import { createCluster, type Cluster } from '../faults/support/cluster.js';
import { waitFor } from '../support/wait-for.js';

/** The last version whose sweep index read `state`, so that no tombstone was rewritten in place. */
const BEFORE = 17;

/** The first version whose sweep indexes read no column a tombstone changes. */
const HOT_TOMBSTONES = 20;

/** Records in the table; the first DUE of them, first on disk, have a response that expired. */
const RECORDS = 600_000;
const DUE = 10_000;

/**
 * Records as docs/operations.md sizes them (a 200-byte body, two headers, a
 * 36-character key in no order), their response expiries in the order they
 * are written, as a service writes them: records $2 and before expired a
 * second apart, the others expire a day later.
 */
const FILL = `
INSERT INTO retrysafe_operations (tenant, operation, key, fingerprint, state, response_status, response_headers,
  response_body, resource_ref, finished_at, response_expires_at, expires_at)
SELECT 'tenant-' || (i % 100), 'orders.create@1', md5(i::text)::uuid::text, sha256(int8send(i)), 'completed', 201,
  '{"content-type":"application/json","location":"/orders/1234567"}'::jsonb,
  convert_to(rpad('{"id":' || i || ',"note":"', 198, 'x') || '"}', 'UTF8'),
  '/orders/' || i, now(),
  now() + make_interval(secs => i - $2::int) + CASE WHEN i > $2::int THEN interval '1 day' ELSE interval '0' END,
  now() + interval '30 days'
FROM generate_series(1, $1::int) AS i`;

/** Records a cycle writes, and records that stay through every cycle. */
const LIVE = 20_000;

/**
 * LIVE records of cycle $1 in no key order, finished a millisecond apart up
 * to now; $2 is how long their response and their tombstone are kept.
 */
const CYCLE = `
INSERT INTO retrysafe_operations (tenant, operation, key, fingerprint, state, response_status, response_headers,
  response_body, resource_ref, finished_at, response_expires_at, expires_at)
SELECT 'tenant-' || (i % 100), 'orders.create@1', md5($1::int || '-' || i)::uuid::text, sha256(int8send(i)), 'completed',
  201, '{"content-type":"application/json","location":"/orders/1234567"}'::jsonb,
  convert_to(rpad('{"id":' || i || ',"note":"', 198, 'x') || '"}', 'UTF8'),
  '/orders/' || i, now(), t.at, t.at
FROM generate_series(1, ${LIVE}) AS i, LATERAL (SELECT now() + $2::interval - make_interval(secs => (${LIVE} - i) * 0.001) AS at) AS t`;

/** The bytes of the record table and of each of its indexes. */
const SIZES = `SELECT c.relname AS name, pg_relation_size(c.oid)::float8 AS bytes FROM pg_class AS c
  WHERE c.oid = 'retrysafe_operations'::regclass
     OR c.oid IN (SELECT indexrelid FROM pg_index WHERE indrelid = 'retrysafe_operations'::regclass)`;

/** The sweep index's expression before migration 0020. */
const SWEEP_AT_BEFORE = `(CASE WHEN state = 'tombstone' THEN expires_at ELSE response_expires_at END)`;

/** The tombstone step's statement before migration 0020, which walked that index: $1 batch size, $2 where from. */
const TOMBSTONE_BEFORE = `
WITH due AS MATERIALIZED (
  SELECT ctid, ${SWEEP_AT_BEFORE} AS at FROM retrysafe_operations
  WHERE ${SWEEP_AT_BEFORE} >= $2::timestamptz AND ${SWEEP_AT_BEFORE} <= now() AND state IN ('completed', 'failed')
  ORDER BY ${SWEEP_AT_BEFORE}
  LIMIT $1
  FOR UPDATE SKIP LOCKED
), swept AS (
  UPDATE retrysafe_operations
  SET state = 'tombstone', response_body = NULL, response_headers = NULL, input = NULL
  WHERE ctid = ANY (ARRAY(SELECT ctid FROM due))
  RETURNING tenant, operation, key
), steps AS (
  DELETE FROM retrysafe_steps AS s
  USING swept
  WHERE s.tenant = swept.tenant AND s.operation = swept.operation AND s.key = swept.key
)
SELECT (SELECT count(*)::int FROM swept) AS n, (SELECT max(at)::text FROM due) AS resume`;

/** Runs the tombstone step as it was before migration 0020, batch after batch until one comes back short. */
async function tombstoneBefore(pool: pg.Pool): Promise<number> {
  let [from, tombstoned] = ['-infinity', 0];
  for (;;) {
    const { rows } = await pool.query<{ n: number; resume: string | null }>(TOMBSTONE_BEFORE, [500, from]);
    const { n = 0, resume = null } = rows[0] ?? {};
    tombstoned += n;
    from = resume ?? from;
    if (n < 500) return tombstoned;
  }
}

/** Updates of the record table, and how many of them were rewritten in place (HOT), as the statistics count them. */
const UPDATES = `SELECT n_tup_upd::int AS updated, n_tup_hot_upd::int AS hot FROM pg_stat_user_tables
  WHERE relname = 'retrysafe_operations'`;

interface Pass {
  readonly tombstoned: number;
  /** Bytes of write-ahead log the pass wrote, full-page images included, per tombstone. */
  readonly walPerTombstone: number;
  readonly updated: number;
  readonly hot: number;
}

/**
 * The write-ahead log a tombstone costs, on the schema before migration 0020
 * and after it, side by side, and whether it is rewritten in place. A cluster
 * of its own, with full-page images on as in production and checkpoints only
 * when asked: each pass starts right after one, so the first change to a page
 * writes the whole page, as at scale, where a pass between two checkpoints
 * touches a small share of a table far larger than the server's memory. With
 * random keys, a new primary-key entry lands on a different leaf each time.
 * Minutes to fill: `.ci/run` runs it (RETRYSAFE_SUITES=all), `npm test` does not.
 */
describe('tombstones rewritten in place (PostgreSQL 15)', () => {
  let cluster: Cluster & { dispose(): Promise<void> };

  beforeAll(async () => {
    cluster = await createCluster('hot-tombstones');
    for (const setting of ["full_page_writes = 'on'", "checkpoint_timeout = '1h'", "max_wal_size = '16GB'"])
      await cluster.query(`ALTER SYSTEM SET ${setting}`);
    await cluster.query('SELECT pg_reload_conf()');
  }, 120_000);
  afterAll(async () => {
    await cluster?.dispose();
  });

  /** Fills a database of the cluster at `version`, then sweeps it once after a checkpoint. */
  async function sweepOnce(database: string, version: number): Promise<Pass> {
    await cluster.query(`CREATE DATABASE ${database}`);
    const pool = new pg.Pool({ connectionString: cluster.url(database), max: 2 });
    try {
      await migrate(
        fromPg(pool),
        migrations.filter((m) => m.version <= version),
      );
      // Vacuumed by hand below, so that the pass's statistics and pages are all the sweeper's.
      await pool.query('ALTER TABLE retrysafe_operations SET (autovacuum_enabled = false)');
      await pool.query(FILL, [RECORDS, DUE]);
      await pool.query('VACUUM ANALYZE retrysafe_operations');
      const before = (await pool.query<{ updated: number; hot: number }>(UPDATES)).rows[0];
      await pool.query('CHECKPOINT');
      const start = (await pool.query<{ lsn: string }>('SELECT pg_current_wal_lsn()::text AS lsn')).rows[0]?.lsn;
      const tombstoned =
        version < HOT_TOMBSTONES
          ? await tombstoneBefore(pool)
          : (await new Sweeper({ store: maintenanceStore(fromPg(pool)), batchSize: 500 }).runOnce()).tombstoned;
      const { rows } = await pool.query<{ bytes: number }>(
        'SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), $1::pg_lsn)::float8 AS bytes',
        [start],
      );
      // The statistics arrive once each session reports them; the pass's updates are all counted then.
      let after = before;
      await waitFor(
        async () => {
          after = (await pool.query<{ updated: number; hot: number }>(UPDATES)).rows[0];
          return (after?.updated ?? 0) - (before?.updated ?? 0) >= tombstoned;
        },
        { what: 'the statistics to count the pass', limitMs: 60_000 },
      );
      return {
        tombstoned,
        walPerTombstone: (rows[0]?.bytes ?? 0) / tombstoned,
        updated: (after?.updated ?? 0) - (before?.updated ?? 0),
        hot: (after?.hot ?? 0) - (before?.hot ?? 0),
      };
    } finally {
      await pool.end();
    }
  }

  it(
    'rewrites every tombstone in place, for less than a quarter of the log it cost before migration 0020',
    { timeout: 1_800_000 },
    async () => {
      const old = await sweepOnce('before_hot', BEFORE);
      const hot = await sweepOnce('hot', migrations.at(-1)?.version ?? 0);

      expect(old).toMatchObject({ tombstoned: DUE, updated: DUE, hot: 0 });
      expect(hot).toMatchObject({ tombstoned: DUE, updated: DUE, hot: DUE });
      const measured = `${hot.walPerTombstone.toFixed(0)} bytes a tombstone, ${old.walPerTombstone.toFixed(0)} before`;
      expect(hot.walPerTombstone, measured).toBeLessThan(old.walPerTombstone / 4);
    },
  );

  it(
    'keeps the table and each index within 1.3 times its size after the first of 10 fill-and-sweep cycles',
    { timeout: 900_000 },
    async () => {
      await cluster.query('CREATE DATABASE cycles');
      const pool = new pg.Pool({ connectionString: cluster.url('cycles'), max: 2 });
      // end() resolves before the sockets close: the cluster's stop must not surface as an error of this pool.
      pool.on('error', () => {});
      try {
        await migrate(fromPg(pool));
        // Each cycle kills half the table, far past migration 0017's 2 %: autovacuum would vacuum it after every
        // pass. It is off, and the test vacuums at that point itself, so that every cycle ends the same way.
        await pool.query('ALTER TABLE retrysafe_operations SET (autovacuum_enabled = false)');
        await pool.query(CYCLE, [0, '1 day']);
        const sweeper = new Sweeper({ store: maintenanceStore(fromPg(pool)), batchSize: 500 });
        const sizes: Record<string, number>[] = [];
        for (let cycle = 1; cycle <= 10; cycle += 1) {
          // Records whose response and tombstone both expired when written: one pass tombstones and deletes them.
          await pool.query(CYCLE, [cycle, '0']);
          expect(await sweeper.runOnce()).toMatchObject({ tombstoned: LIVE, deleted: LIVE, failed: [] });
          // A vacuum frees the index pages it empties for reuse only once every transaction that could still see
          // them has ended, which on a busy server happens while it runs; on this quiet one, at the next vacuum.
          await pool.query('VACUUM retrysafe_operations');
          await pool.query('SELECT pg_current_xact_id()');
          await pool.query('VACUUM retrysafe_operations');
          const { rows } = await pool.query<{ name: string; bytes: number }>(SIZES);
          sizes.push(Object.fromEntries(rows.map((row) => [row.name, row.bytes])));
        }
        const [first, last] = [sizes[0] ?? {}, sizes.at(-1) ?? {}];
        expect(Object.keys(first)).toEqual(
          expect.arrayContaining(['retrysafe_operations', 'retrysafe_operations_pkey']),
        );
        const grown = Object.entries(last).filter(([name, bytes]) => bytes > (first[name] ?? 0) * 1.3);
        const table = Object.keys(last).map((name) => `${name}: ${sizes.map((cycle) => cycle[name]).join(', ')}`);
        expect(grown, table.join('\n')).toEqual([]);
      } finally {
        await pool.end();
      }
    },
  );
});
