import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fromPg } from '../../src/postgres/index.js';
import { maintenanceStore } from '../../src/postgres/postgres-maintenance-store.js';
import { DELETE_EXPIRED_TOMBSTONES, TOMBSTONE_EXPIRED } from '../../src/postgres/sql/sweep.js';
import { createMigratedDatabase, type TestDatabase } from '../support/database.js';
import { observed } from '../support/observed-database.js';

const FILL = `INSERT INTO retrysafe_operations (tenant, operation, key, fingerprint, state, response_status, response_headers,
  response_body, finished_at, response_expires_at, expires_at) SELECT 't', 'orders.create@1', 'k' || i, sha256(int8send(i)),
  'completed', 201, '{}', '\\x7b7d', now(), now() - interval '1 minute', now() - interval '1 second'
FROM generate_series(1, 20) AS i`;

/**
 * On a table of millions of rows the planner's estimates put a sweep batch
 * past `jit_above_cost`, and PostgreSQL compiled it to machine code on every
 * batch. Here the database asks for JIT on every statement, whatever its
 * cost: each batch must still run with it off.
 */
describe('a sweep batch and JIT compilation (PostgreSQL)', () => {
  let db: TestDatabase;
  let pool: pg.Pool;
  beforeAll(async () => {
    db = await createMigratedDatabase();
    const admin = new pg.Client({ connectionString: db.url });
    await admin.connect();
    const name = new URL(db.url).pathname.slice(1);
    await admin.query(`ALTER DATABASE "${name}" SET jit = on`);
    await admin.query(`ALTER DATABASE "${name}" SET jit_above_cost = 0`);
    await admin.query(FILL);
    await admin.end();
    pool = new pg.Pool({ connectionString: db.url, max: 1 });
  }, 60_000);
  afterAll(async () => {
    await pool?.end();
    await db?.drop();
  });

  it('runs each step with JIT off, though the database turns it on for every statement', async () => {
    const jitBySweep = new Map<string, string>();
    const database = observed(fromPg(pool), async (text, values, send, sql) => {
      const result = await send();
      const sent = typeof text === 'string' ? text : text.text;
      if (sent === TOMBSTONE_EXPIRED || sent === DELETE_EXPIRED_TOMBSTONES) {
        const [row] = (await sql.query<{ jit: string }>(`SELECT current_setting('jit') AS jit`)).rows;
        jitBySweep.set(sent === TOMBSTONE_EXPIRED ? 'tombstone' : 'delete', row?.jit ?? '');
      }
      return result;
    });
    const store = maintenanceStore(database);
    expect((await store.tombstoneExpired(500)).changed).toBe(20);
    expect((await store.deleteExpiredTombstones(500)).changed).toBe(20);
    expect(Object.fromEntries(jitBySweep)).toEqual({ tombstone: 'off', delete: 'off' });
    // The database's own setting is left as it was for everything else.
    expect((await pool.query<{ jit: string }>(`SELECT current_setting('jit') AS jit`)).rows[0]?.jit).toBe('on');
  });
});
