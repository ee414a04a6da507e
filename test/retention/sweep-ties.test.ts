import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { fromPg, migrate } from '../../src/postgres/index.js';
import { maintenanceStore } from '../../src/postgres/postgres-maintenance-store.js';
import { Sweeper } from '../../src/retention/sweeper.js';
import type { Statement } from '../../src/store/sql-client.js';
import { createTestDatabase } from '../support/database.js';

/** Records one INSERT wrote, so that their responses expired at one time, as a bulk import's do. */
const RECORDS = 20_000;
const BATCH = 500;

const FILL = `INSERT INTO retrysafe_operations (tenant, operation, key, fingerprint, state, response_status, response_headers,
  response_body, finished_at, response_expires_at, expires_at) SELECT 'tenant-' || (i % 10), 'orders.create@1', md5(i::text),
  sha256(int8send(i)), 'completed', 201, '{}', '\\x7b7d', now(), now() - interval '1 minute', now() + interval '30 days'
FROM generate_series(1, ${RECORDS}) AS i`;

/** Entries the index of response expiries gave its scans, dead or alive, as the statistics count them. */
const ENTRIES_READ = `SELECT idx_tup_read::float8 AS n FROM pg_stat_user_indexes
  WHERE indexrelname = 'retrysafe_operations_sweep_responses'`;

/**
 * The tombstone step walks the index of response expiries from where its
 * batch before stopped. Records that share one expiry must not be walked over
 * again by every batch: the index entries a pass read are counted, not timed.
 */
describe('the tombstone step over records that share one response expiry (PostgreSQL)', () => {
  it(
    'reads each of their index entries a bounded number of times in a pass, and a few batches of them in each',
    { timeout: 300_000 },
    async () => {
      const db = await createTestDatabase();
      // One session: told to flush its statistics, it does so once idle, before it reads the next statement.
      const session = new pg.Pool({ connectionString: db.url, max: 1 });
      try {
        await migrate(fromPg(session));
        await session.query(FILL);
        await session.query('VACUUM ANALYZE retrysafe_operations');
        const read = async (): Promise<number> => {
          await session.query('SELECT pg_stat_force_next_flush()');
          await session.query('SELECT pg_stat_clear_snapshot()');
          return (await session.query<{ n: number }>(ENTRIES_READ)).rows[0]?.n ?? Number.NaN;
        };
        // The entries each batch read: the store's statements, each followed by a read of the statistics.
        const batches: number[] = [];
        const database = fromPg(session);
        const counting: typeof database = {
          ...database,
          query: async <Row>(text: string | Statement, values: readonly unknown[] = []) => {
            const before = await read();
            const result = await database.query<Row>(text, values);
            batches.push((await read()) - before);
            return result;
          },
        };

        const report = await new Sweeper({ store: maintenanceStore(counting), batchSize: BATCH }).runOnce();

        expect(report).toMatchObject({ tombstoned: RECORDS, deleted: 0, failed: [] });
        const entries = batches.reduce((sum, n) => sum + n, 0);
        // Each entry once by the walk, and once more where the batch looks for rows another sweeper holds, among
        // those it walked; walked again by every batch, they came to RECORDS × (RECORDS / BATCH) / 2.
        expect(entries).toBeGreaterThanOrEqual(RECORDS);
        expect(entries, `${entries} index entries read`).toBeLessThanOrEqual(3 * RECORDS);
        expect(Math.max(...batches), `${Math.max(...batches)} index entries in one batch`).toBeLessThanOrEqual(
          3 * BATCH,
        );
      } finally {
        await session.end();
        await db.drop();
      }
    },
  );
});
