import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fromPg, migrate, portable } from '../../src/postgres/index.js';
import { CLAIM_ATOMIC, claimAtomicValues } from '../../src/postgres/sql/claim-atomic.js';
import { createMigratedDatabase, type TestDatabase } from '../support/database.js';

/**
 * What atomic mode's claim reads: the primary key of the operation table,
 * once per claim, whether the key is new or replayed. Counted by the
 * database itself, in the claim's own transaction.
 */
let db: TestDatabase;
let pool: pg.Pool;
beforeAll(async () => {
  db = await createMigratedDatabase();
  pool = new pg.Pool({ connectionString: db.url, max: 2 });
  await migrate(portable(fromPg(pool)));
});
afterAll(async () => {
  await pool.end();
  await db.drop();
});

async function lookupsOfOneClaim(key: string): Promise<{ readonly found: boolean; readonly lookups: number }> {
  const client = await pool.connect();
  try {
    // Counted as a difference: the database may keep uncounted scans of earlier transactions on this connection.
    const scans = async (): Promise<number> =>
      Number(
        (
          await client.query<{ scans: string | null }>(
            `SELECT idx_scan AS scans FROM pg_stat_xact_user_tables WHERE relname = 'retrysafe_operations'`,
          )
        ).rows[0]?.scans ?? 0,
      );
    await client.query('BEGIN');
    const before = await scans();
    const claim = await client.query<{ found: boolean }>(
      CLAIM_ATOMIC.text,
      claimAtomicValues({
        identity: { tenant: 'tenant-a', operation: 'orders.create@1', key },
        fingerprint: new Uint8Array(32),
        lockTimeoutMs: 1000,
      }),
    );
    return { found: claim.rows[0]!.found, lookups: (await scans()) - before };
  } finally {
    await client.query('ROLLBACK');
    client.release();
  }
}

describe("atomic mode's claim", () => {
  it('reads the primary key once for a new key', async () => {
    expect(await lookupsOfOneClaim(randomUUID())).toEqual({ found: false, lookups: 1 });
  });

  it('reads the primary key once for a key that has a record', async () => {
    const key = randomUUID();
    await pool.query(
      `INSERT INTO retrysafe_operations (tenant, operation, key, fingerprint, state, response_status, expires_at)
       VALUES ('tenant-a', 'orders.create@1', $1, decode(repeat('00', 32), 'hex'), 'tombstone', 201, now() + interval '1 hour')`,
      [key],
    );
    expect(await lookupsOfOneClaim(key)).toEqual({ found: true, lookups: 1 });
  });
});
