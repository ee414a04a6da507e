import { PGlite } from '@electric-sql/pglite';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fromPg, fromPGlite, migrate, portable } from '../../src/postgres/index.js';
import { maintenanceStore } from '../../src/postgres/postgres-maintenance-store.js';
import { migrations } from '../../src/postgres/migrations/index.js';
import { DELETE_EXPIRED_TOMBSTONES, TOMBSTONE_EXPIRED } from '../../src/postgres/sql/sweep.js';
import { Sweeper } from '../../src/retention/sweeper.js';
import type { SqlClient, SqlDatabase } from '../../src/store/sql-client.js';
import { createTestDatabase } from '../support/database.js';

/** The version before the one sweep index. */
const BEFORE = 8;

/**
 * 100,000 records in every state, in no time order on disk: i % 100 picks the
 * state, and the times shuffle with i. 3 % expired responses, 2 % expired
 * tombstones, the rest fresh or unfinished.
 */
const FILLED_TABLE = `
INSERT INTO retrysafe_operations (tenant, operation, key, fingerprint, state, mode, owner_token, lease_expires_at,
  response_status, response_headers, response_body, resource_ref, reason, finished_at, response_expires_at, expires_at)
SELECT 'tenant-' || (i % 50), 'orders.create@1', 'k-' || i, sha256(convert_to('k-' || i, 'UTF8')), s.state,
  CASE WHEN s.state = 'in_progress' THEN 'leased' ELSE 'atomic' END,
  CASE WHEN s.state = 'in_progress' THEN gen_random_uuid() END,
  CASE WHEN s.state = 'in_progress' THEN now() + interval '1 minute' END,
  CASE WHEN s.state IN ('completed', 'failed', 'tombstone') THEN 201 END,
  CASE WHEN s.state IN ('completed', 'failed') THEN '{"content-type":"application/json"}'::jsonb END,
  CASE WHEN s.state IN ('completed', 'failed') THEN convert_to('{"id":' || i || '}', 'UTF8') END,
  CASE WHEN s.state IN ('completed', 'tombstone') THEN '/orders/' || i END,
  CASE WHEN s.state = 'unknown' THEN 'the provider did not answer' END,
  CASE WHEN s.state IN ('completed', 'failed') THEN now() - interval '1 day' END,
  CASE WHEN s.state IN ('completed', 'failed') THEN now() + make_interval(secs => s.response_in * (1 + (i::bigint * 7919) % 1000)) END,
  CASE WHEN s.state IN ('completed', 'failed', 'tombstone') THEN now() + make_interval(secs => s.expires_in * (1 + (i::bigint * 104729) % 1000)) END
FROM (SELECT i,
    CASE WHEN i % 100 < 2 THEN 'completed' WHEN i % 100 < 3 THEN 'failed' WHEN i % 100 < 40 THEN 'tombstone'
      WHEN i % 100 < 95 THEN 'completed' WHEN i % 100 < 97 THEN 'in_progress' ELSE 'unknown' END AS state,
    CASE WHEN i % 100 < 3 THEN -60 ELSE 3600 END AS response_in,
    CASE WHEN i % 100 BETWEEN 3 AND 4 THEN -60 ELSE 86400 END AS expires_in
  FROM generate_series(1, 100000) AS i) AS s`;

/**
 * Every row as text, in key order, hashed: equal before and after means no row changed. Columns
 * later migrations add (empty on every row) are left out.
 */
const TABLE_HASH = `SELECT md5(string_agg((to_jsonb(o) - 'last_error')::text, '|' ORDER BY key)) AS hash, count(*)::int AS n FROM retrysafe_operations AS o`;

const DUE = `SELECT
  count(*) FILTER (WHERE state IN ('completed', 'failed') AND response_expires_at <= now())::int AS responses,
  count(*) FILTER (WHERE state = 'tombstone' AND expires_at <= now())::int AS tombstones
FROM retrysafe_operations`;

const INDEXES = `SELECT c.relname AS name, i.indisvalid AS valid FROM pg_index AS i JOIN pg_class AS c ON c.oid = i.indexrelid
  WHERE i.indrelid = 'retrysafe_operations'::regclass ORDER BY 1`;

interface Opened {
  readonly database: SqlDatabase<SqlClient>;
  close(): Promise<void>;
}

/** A database at the version before the sweep index on each engine. */
const openers: readonly { readonly name: string; open(): Promise<Opened> }[] = [
  {
    name: 'postgres (node-postgres)',
    async open() {
      const db = await createTestDatabase();
      const pool = new pg.Pool({ connectionString: db.url, max: 2 });
      pool.on('error', () => {});
      return { database: portable(fromPg(pool)), close: async () => (await pool.end(), await db.drop()) };
    },
  },
  {
    name: 'pglite',
    async open() {
      const lite = await PGlite.create();
      return { database: portable(fromPGlite(lite)), close: () => lite.close() };
    },
  },
];

describe.each(openers)('the one sweep index (0009) on a filled table on $name', (opener) => {
  let opened: Opened;
  let database: SqlDatabase<SqlClient>;
  let due: { responses: number; tombstones: number } | undefined;
  beforeAll(async () => {
    opened = await opener.open();
    database = opened.database;
    await migrate(
      database,
      migrations.filter((m) => m.version <= BEFORE),
    );
    await database.query(FILLED_TABLE);
    due = (await database.query<{ responses: number; tombstones: number }>(DUE)).rows[0];
  }, 120_000);
  afterAll(() => opened.close());

  it('replaces the two expiry indexes with one and changes no row', { timeout: 120_000 }, async () => {
    const before = (await database.query(TABLE_HASH)).rows[0];
    const later = migrations.filter((m) => m.version > BEFORE).map((m) => m.version);

    expect(await migrate(database)).toEqual({ applied: later, version: migrations.at(-1)?.version });

    expect((await database.query(TABLE_HASH)).rows[0]).toEqual(before);
    const indexes = (await database.query<{ name: string; valid: boolean }>(INDEXES)).rows;
    expect(indexes.map((index) => index.name)).toContain('retrysafe_operations_sweep');
    expect(indexes.map((index) => index.name)).toContain('retrysafe_operations_sweep_responses');
    expect(indexes.map((index) => index.name)).not.toContain('retrysafe_operations_response_expiry');
    expect(indexes.map((index) => index.name)).not.toContain('retrysafe_operations_expiry');
    expect(indexes.every((index) => index.valid)).toBe(true);
  });

  // Since migration 0020 the tombstone step walks the index of response expiries, the delete step the sweep index.
  it.each([
    ['turning expired responses into tombstones', TOMBSTONE_EXPIRED, 'retrysafe_operations_sweep_responses'],
    ['deleting expired tombstones', DELETE_EXPIRED_TOMBSTONES, 'retrysafe_operations_sweep'],
  ])('finds the rows for %s through its sweep index, without reading the table', async (_what, sql, index) => {
    await database.query('ANALYZE retrysafe_operations');
    const { rows } = await database.query<{ 'QUERY PLAN': string }>(`EXPLAIN ${sql}`, [500, '{-infinity}']);
    const plan = rows.map((row) => row['QUERY PLAN']).join('\n');
    expect(plan).toMatch(new RegExp(`(Index Scan using|Bitmap Index Scan on) ${index}\\b`));
    expect(plan).not.toMatch(/Seq Scan on retrysafe_operations/);
  });

  it('sweeps exactly what had expired', { timeout: 120_000 }, async () => {
    expect(due).toEqual({ responses: 3000, tombstones: 2000 });
    const report = await new Sweeper({ store: maintenanceStore(database), batchSize: 500 }).runOnce();
    expect(report).toMatchObject({ tombstoned: due?.responses, deleted: due?.tombstones });
    expect((await database.query(DUE)).rows[0]).toEqual({ responses: 0, tombstones: 0 });
    const { rows } = await database.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM retrysafe_operations WHERE state = 'tombstone'`,
    );
    // 35,000 fresh tombstones, and 3,000 new ones.
    expect(rows[0]?.n).toBe(38_000);
  });
});
