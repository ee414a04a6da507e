import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { fromPg, migrate } from '../../src/postgres/index.js';
import { maintenanceStore } from '../../src/postgres/postgres-maintenance-store.js';
import { Sweeper } from '../../src/retention/sweeper.js';
import { createTestDatabase } from '../support/database.js';

/** Records one INSERT wrote, so that their responses expired at one time, as a bulk import's do. */
const RECORDS = 20_000;
const BATCH = 500;

const FILL = `INSERT INTO retrysafe_operations (tenant, operation, key, fingerprint, state, response_status, response_headers,
  response_body, finished_at, response_expires_at, expires_at) SELECT 'tenant-' || (i % 10), 'orders.create@1', md5(i::text),
  sha256(int8send(i)), 'completed', 201, '{}', '\\x7b7d', now(), now() - interval '1 minute', now() + interval '30 days'
FROM generate_series(1, ${RECORDS}) AS i`;

/**
 * Entries the index of response expiries gave its scans, dead or alive, as the statistics count them; and the
 * record updates that were not rewritten in place (no room on the page), each of which added an entry beside the
 * row's old one that a later scan over the row reads too.
 */
const ENTRIES_READ = `SELECT i.idx_tup_read::float8 AS n, (t.n_tup_upd - t.n_tup_hot_upd)::float8 AS moved
  FROM pg_stat_user_indexes AS i JOIN pg_stat_user_tables AS t USING (relid)
  WHERE i.indexrelname = 'retrysafe_operations_sweep_responses'`;

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
        const read = async (): Promise<{ readonly n: number; readonly moved: number }> => {
          await session.query('SELECT pg_stat_force_next_flush()');
          await session.query('SELECT pg_stat_clear_snapshot()');
          const [row] = (await session.query<{ n: number; moved: number }>(ENTRIES_READ)).rows;
          return row ?? { n: Number.NaN, moved: Number.NaN };
        };
        // The entries each batch read, and the updates it could not make in place.
        const batches: number[] = [];
        const moves: number[] = [];
        const database = fromPg(session);
        // Each batch is a transaction of its own (JIT off, then the statement): counted around it, once the
        // session is idle again and has flushed what it counted.
        const counting: typeof database = {
          ...database,
          transaction: async (work, opening) => {
            const before = await read();
            const result = await database.transaction(work, opening);
            const after = await read();
            batches.push(after.n - before.n);
            moves.push(after.moved - before.moved);
            return result;
          },
        };

        const report = await new Sweeper({ store: maintenanceStore(counting), batchSize: BATCH }).runOnce();

        expect(report).toMatchObject({ tombstoned: RECORDS, deleted: 0, failed: [] });
        const entries = batches.reduce((sum, n) => sum + n, 0);
        const moved = moves.reduce((sum, n) => sum + n, 0);
        // Each entry once by the walk, and once more where the batch looks for rows another sweeper holds, among
        // those it walked, besides the entry an update not made in place added; walked again by every batch, they
        // came to RECORDS × (RECORDS / BATCH) / 2.
        expect(entries).toBeGreaterThanOrEqual(RECORDS);
        expect(entries, `${entries} index entries read, ${moved} updates not in place`).toBeLessThanOrEqual(
          3 * RECORDS + moved,
        );
        const beyond = batches.map((n, index) => n - (moves[index] ?? 0));
        expect(
          Math.max(...beyond),
          `${Math.max(...beyond)} index entries in one batch beyond its moves`,
        ).toBeLessThanOrEqual(3 * BATCH);
      } finally {
        await session.end();
        await db.drop();
      }
    },
  );
});
