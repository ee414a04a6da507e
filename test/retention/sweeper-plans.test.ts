import { readFileSync } from 'node:fs';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pruneInbox } from '../../src/inbox/inbox.js';
import { pruneOutbox } from '../../src/outbox/prune.js';
import { fromPg, migrate } from '../../src/postgres/index.js';
import { pruneWebhookEvents } from '../../src/webhooks/prune.js';
import { maintenanceStore } from '../../src/postgres/postgres-maintenance-store.js';
import type { MaintenanceStore } from '../../src/store/maintenance-store.js';
import { Sweeper } from '../../src/retention/sweeper.js';
import type { SqlDatabase } from '../../src/store/sql-client.js';
import { markdownTable } from '../docs/markdown-table.js';
import { createMigratedDatabase, type TestDatabase } from '../support/database.js';
import { nodes, type PlanNode, type Sent } from '../support/query-plans.js';
import { observed } from '../support/observed-database.js';

/**
 * The plans of every statement the sweeper sends, on a million records with
 * none, a tenth or nine tenths of them due: each walks the sweep index whatever
 * the statistics say (fresh after ANALYZE, or stale right after a pass swept
 * what they counted as due), never the table, and a pass with nothing due
 * reads a few buffers (counted by EXPLAIN, not timed); the same of the prune
 * tasks of the outbox, the inbox and webhook events; and the bytes a record
 * and a tombstone take, as docs/operations.md gives them. Minutes to fill:
 * `.ci/run` runs it (RETRYSAFE_SUITES=all), `npm test` does not.
 */
const RECORDS = 1_000_000;

/**
 * States drawn from a hash of the row number, spread as in life: 60 %
 * completed, 5 % failed, 30 % tombstones, 5 % unfinished (no expiry). $1 % of
 * the finished ones are due: a response past its expiry, or a tombstone past
 * its own. Times spread over the day before now, or the day after the next
 * hour (so none falls due while the test runs), in no order on disk.
 */
const FILL = `
INSERT INTO retrysafe_operations (tenant, operation, key, fingerprint, state, mode, owner_token, lease_expires_at,
  response_status, response_headers, response_body, resource_ref, reason, finished_at, response_expires_at, expires_at, input)
SELECT 'tenant-' || (i % 100), 'orders.create@1', 'key-' || md5(i::text), sha256(int8send(i)), s.state,
  CASE WHEN s.state IN ('in_progress', 'unknown') THEN 'leased' ELSE 'atomic' END,
  CASE WHEN s.state = 'in_progress' THEN gen_random_uuid() END,
  CASE WHEN s.state = 'in_progress' THEN now() + interval '5 minutes' END,
  CASE WHEN s.state IN ('completed', 'failed', 'tombstone') THEN 201 END,
  CASE WHEN s.state IN ('completed', 'failed') THEN '{}'::jsonb END,
  CASE WHEN s.state IN ('completed', 'failed') THEN '\\x7b7d'::bytea END,
  CASE WHEN s.state IN ('completed', 'failed', 'tombstone') THEN '/orders/' || i END,
  CASE WHEN s.state = 'unknown' THEN 'the provider did not answer' END,
  CASE WHEN s.state IN ('completed', 'failed', 'tombstone') THEN now() - interval '2 days' END,
  CASE WHEN s.state IN ('completed', 'failed') THEN now() + t.due
    WHEN s.state = 'tombstone' THEN now() - interval '2 days' END,
  CASE WHEN s.state IN ('completed', 'failed') THEN now() + interval '30 days'
    WHEN s.state = 'tombstone' THEN now() + t.due END,
  CASE WHEN s.state IN ('in_progress', 'unknown') THEN '{}'::jsonb END
FROM generate_series(1, ${RECORDS}) AS i,
  LATERAL (SELECT abs(hashint4(i)) % 100 AS h, abs(hashint4(-i)) % 100 AS d) AS r,
  LATERAL (SELECT CASE WHEN r.h < 60 THEN 'completed' WHEN r.h < 65 THEN 'failed' WHEN r.h < 95 THEN 'tombstone'
      WHEN r.h < 98 THEN 'in_progress' ELSE 'unknown' END AS state) AS s,
  LATERAL (SELECT make_interval(secs => 1 + abs(hashint4(i * 7)) % 86400)
    * CASE WHEN r.d < $1 THEN -1 ELSE 1 END + CASE WHEN r.d < $1 THEN interval '0' ELSE interval '1 hour' END AS due) AS t`;

const DUE = `SELECT
  count(*) FILTER (WHERE state IN ('completed', 'failed') AND response_expires_at <= now())::int AS responses,
  count(*) FILTER (WHERE state = 'tombstone' AND expires_at <= now())::int AS tombstones
FROM retrysafe_operations`;

/**
 * 200,000 records as docs/operations.md sizes them: a response of a 200-byte
 * body and two headers, a key of 36 characters in no order, a tenant, an
 * operation and a resource reference; or, as the sweeper leaves them,
 * tombstones without body or headers.
 */
const SIZED = 200_000;
const FILL_SIZED = `
INSERT INTO retrysafe_operations (tenant, operation, key, fingerprint, state, response_status, response_headers,
  response_body, resource_ref, finished_at, response_expires_at, expires_at)
SELECT 'tenant-' || (i % 100), 'orders.create@1', md5(i::text)::uuid::text, sha256(int8send(i)), $1::text, 201,
  CASE WHEN $1::text = 'completed' THEN '{"content-type":"application/json","location":"/orders/1234567"}'::jsonb END,
  CASE WHEN $1::text = 'completed' THEN convert_to(rpad('{"id":' || i || ',"note":"', 198, 'x') || '"}', 'UTF8') END,
  '/orders/' || i, now(), now() + interval '1 day', now() + interval '30 days'
FROM generate_series(1, ${SIZED}) AS i`;

/** The bytes docs/operations.md's sizing table gives for the row `what`. */
function documentedBytes(what: string): number {
  const doc = readFileSync(new URL('../../docs/operations.md', import.meta.url), 'utf8');
  const rows = markdownTable(doc, '### Sizing the operation table', 'docs/operations.md');
  const bytes = Number(rows.find((row) => row.row === what)?.bytes?.replace(/,/g, ''));
  if (!(bytes > 0)) throw new Error(`docs/operations.md has no sizing row for ${what}`);
  return bytes;
}

/** 300,000 rows finished over the last 11 days, one in ten more than a day ago, in no order on disk. */
const FINISHED = `SELECT i, now() - make_interval(secs => CASE WHEN abs(hashint4(i)) % 10 = 0 THEN 86400 + i % 864000 ELSE i % 86000 END) AS at
  FROM generate_series(1, 300000) AS i`;

/** Each prune task the sweeper runs, its table filled with finished rows. */
const PRUNES = [
  {
    table: 'retrysafe_outbox',
    prune: pruneOutbox,
    fill: `INSERT INTO retrysafe_outbox (id, topic, payload, state, attempts, created_at, next_attempt_at, delivered_at)
      SELECT gen_random_uuid(), 'orders', '{}', 'delivered', 1, f.at, f.at, f.at FROM (${FINISHED}) AS f`,
  },
  {
    table: 'retrysafe_inbox',
    prune: pruneInbox,
    fill: `INSERT INTO retrysafe_inbox (consumer, message_id, processed_at)
      SELECT 'emails', 'message-' || f.i, f.at FROM (${FINISHED}) AS f`,
  },
  {
    table: 'retrysafe_webhook_events',
    prune: pruneWebhookEvents,
    fill: `INSERT INTO retrysafe_webhook_events (receiver, id, payload, sent_at, state, attempts, processed_at)
      SELECT 'payments', 'evt_' || f.i, '{}', f.at, 'processed', 1, f.at FROM (${FINISHED}) AS f`,
  },
] as const;

describe('the sweeper on a million records (PostgreSQL)', () => {
  let db: TestDatabase;
  let pool: pg.Pool;
  let sent: Sent[] = [];
  let recording: SqlDatabase<pg.PoolClient>;

  beforeAll(async () => {
    db = await createMigratedDatabase();
    pool = new pg.Pool({ connectionString: db.url, max: 2 });
    const database = fromPg(pool);
    await migrate(database);
    // The statistics stay what the test's ANALYZE made them, however many rows a pass changes.
    await pool.query('ALTER TABLE retrysafe_operations SET (autovacuum_enabled = false)');
    recording = observed(database, (text, values, send) => {
      sent.push({ text: typeof text === 'string' ? text : text.text, values });
      return send();
    });
  }, 120_000);
  afterAll(async () => {
    await pool?.end();
    await db?.drop();
  });

  /** The statements on the record table that `work` sends, with the values they were sent with. */
  async function statementsOf(work: (store: MaintenanceStore) => Promise<unknown>): Promise<Sent[]> {
    sent = [];
    await work(maintenanceStore(recording));
    const recorded = sent.filter((statement) => statement.text.includes('retrysafe_operations'));
    // A batch of each step at least: the tombstone step and the delete step.
    expect(recorded.length).toBeGreaterThanOrEqual(2);
    return recorded;
  }

  /** `statement`'s plan, walked through an index on the record table; with `analyze`, also run, and the buffers it read. */
  async function explain(statement: Sent, analyze: boolean): Promise<number> {
    const options = analyze ? 'ANALYZE, BUFFERS, FORMAT JSON' : 'FORMAT JSON';
    const { rows } = await pool.query<{ 'QUERY PLAN': { Plan: PlanNode }[] }>(
      `EXPLAIN (${options}) ${statement.text}`,
      [...statement.values],
    );
    const plan = rows[0]?.['QUERY PLAN'][0]?.Plan;
    if (plan === undefined) throw new Error('EXPLAIN returned no plan');
    const all = nodes(plan);
    const onRecords = all.filter((node) => node['Relation Name'] === 'retrysafe_operations');
    expect(onRecords.map((node) => `${node['Node Type']} on ${node['Relation Name']}`)).not.toContainEqual(
      expect.stringMatching(/^Seq Scan/),
    );
    // The walk itself in the index's order: a bitmap scan would read every due row, and sort them, for each batch.
    expect(
      all
        .filter((node) => /^retrysafe_operations_sweep/.test(node['Index Name'] ?? ''))
        .map((node) => node['Node Type']),
    ).toContain('Index Scan');
    const sorted = all.filter((node) => node['Node Type'] === 'Sort').flatMap((sort) => nodes(sort));
    expect(sorted.map((node) => node['Relation Name'])).not.toContain('retrysafe_operations');
    return (plan['Shared Hit Blocks'] ?? 0) + (plan['Shared Read Blocks'] ?? 0);
  }

  it.each([0, 10, 90])(
    'walks the sweep index with %i percent due, after ANALYZE and on the statistics a pass left stale, and a pass with nothing due reads a few buffers',
    { timeout: 900_000 },
    async (percent) => {
      await pool.query('TRUNCATE retrysafe_operations, retrysafe_steps');
      await pool.query(FILL, [percent]);
      // VACUUM sets the visibility map, as autovacuum does on a table this size.
      await pool.query('VACUUM ANALYZE retrysafe_operations');
      const due = (await pool.query<{ responses: number; tombstones: number }>(DUE)).rows[0];
      const finished = RECORDS * 0.95;
      expect((due?.responses ?? 0) + (due?.tombstones ?? 0)).toBeGreaterThanOrEqual(finished * (percent / 100 - 0.01));
      expect((due?.responses ?? 0) + (due?.tombstones ?? 0)).toBeLessThanOrEqual(finished * (percent / 100 + 0.01));

      // Fresh statistics: one batch of each step, as sent, explained without being run again.
      const oneBatchEach = async (store: MaintenanceStore) => {
        await store.tombstoneExpired(500);
        await store.deleteExpiredTombstones(500);
      };
      for (const statement of await statementsOf(oneBatchEach)) await explain(statement, false);

      // Everything due goes, in large batches to keep the suite short; the statements are the same.
      await new Sweeper({ store: maintenanceStore(fromPg(pool)), batchSize: 20_000 }).runOnce();
      expect((await pool.query(DUE)).rows[0]).toEqual({ responses: 0, tombstones: 0 });
      // Every response that went left a tombstone that keeps status and resource, so a late retry is refused.
      const { rows: kept } = await pool.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM retrysafe_operations
         WHERE state = 'tombstone' AND (response_status IS NULL OR resource_ref IS NULL OR response_body IS NOT NULL)`,
      );
      expect(kept[0]?.n).toBe(0);
      // VACUUM without ANALYZE, as autovacuum does after a sweep this size: the entries of swept rows go, and the
      // statistics still count that share as due.
      await pool.query('VACUUM retrysafe_operations');

      // Nothing is due: a whole pass, each step one empty batch, reads a few buffers.
      const pass = (store: MaintenanceStore) => new Sweeper({ store, batchSize: 500 }).runOnce();
      for (const statement of await statementsOf(pass)) {
        const buffers = await explain(statement, true);
        expect(buffers, statement.text).toBeLessThanOrEqual(40);
      }
    },
  );

  it.each([
    ['completed', 'a record with its response'],
    ['tombstone', 'a tombstone'],
  ])(
    'takes the bytes docs/operations.md gives for %s rows, table and indexes',
    { timeout: 600_000 },
    async (state, what) => {
      await pool.query('TRUNCATE retrysafe_operations, retrysafe_steps');
      await pool.query(FILL_SIZED, [state]);
      await pool.query('VACUUM ANALYZE retrysafe_operations');
      const { rows } = await pool.query<{ bytes: number }>(
        `SELECT pg_total_relation_size('retrysafe_operations')::float8 / ${SIZED} AS bytes`,
      );
      const measured = rows[0]?.bytes ?? 0;
      const documented = documentedBytes(what);
      expect(measured, `${what}: measured ${measured.toFixed(0)} bytes`).toBeGreaterThan(documented * 0.9);
      expect(measured, `${what}: measured ${measured.toFixed(0)} bytes`).toBeLessThan(documented * 1.1);
    },
  );

  it.each(PRUNES)(
    'prunes $table on its index, however much its statistics count as due, and a prune with nothing due reads a few buffers',
    { timeout: 600_000 },
    async ({ table, prune, fill }) => {
      await pool.query(fill);
      await pool.query(`VACUUM ANALYZE ${table}`);
      const day = { olderThanSeconds: 86_400, batchSize: 500 };
      expect(await prune(fromPg(pool), { ...day, batchSize: 20_000 })).toBeGreaterThan(25_000);
      // Statistics still count a tenth as due, and nothing is.
      await pool.query(`VACUUM ${table}`);
      sent = [];
      expect(await prune(recording, day)).toBe(0);
      expect(sent).toHaveLength(1);
      for (const statement of sent) {
        const { rows } = await pool.query<{ 'QUERY PLAN': { Plan: PlanNode }[] }>(
          `EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ${statement.text}`,
          [...statement.values],
        );
        const plan = rows[0]?.['QUERY PLAN'][0]?.Plan;
        if (plan === undefined) throw new Error('EXPLAIN returned no plan');
        const scans = nodes(plan).filter((node) => node['Relation Name'] === table);
        expect(scans.map((node) => node['Node Type'])).not.toContain('Seq Scan');
        expect((plan['Shared Hit Blocks'] ?? 0) + (plan['Shared Read Blocks'] ?? 0)).toBeLessThanOrEqual(40);
      }
    },
  );
});
