import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fromPg } from '../../src/postgres/index.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';

/**
 * An application may wrap one pool more than once (a store, a relay, a
 * sweeper each calling `fromPg(pool)`): the guards `fromPg` puts on the pool
 * and on its connections must go on once, not once per call, or the pool's
 * and each connection's listeners grow until Node warns of a leak.
 */
describe('fromPg called many times on one pool', () => {
  let db: TestDatabase;
  let pool: pg.Pool;

  beforeAll(async () => {
    db = await createTestDatabase();
    // One connection: every transaction meets the same client.
    pool = new pg.Pool({ connectionString: db.url, max: 1 });
  });
  afterAll(async () => {
    await pool.end();
    await db.drop();
  });

  /** The 'error' listeners on the pool's one connection, counted while it is checked out. */
  const clientErrorListeners = async (): Promise<number> => {
    const client = await pool.connect();
    try {
      return client.listenerCount('error');
    } finally {
      client.release();
    }
  };

  it("adds one 'acquire' listener to the pool and one 'error' listener to a connection", async () => {
    const first = fromPg(pool);
    expect((await first.transaction((sql) => sql.query<{ n: number }>('SELECT 1 AS n'))).rows).toEqual([{ n: 1 }]);
    const poolListeners = pool.listenerCount('acquire');
    const connectionListeners = await clientErrorListeners();

    for (let call = 0; call < 12; call += 1) {
      const database = fromPg(pool);
      await database.transaction((sql) => sql.query('SELECT 1'));
      await database.query('SELECT 1');
    }

    expect({ pool: pool.listenerCount('acquire'), connection: await clientErrorListeners() }).toEqual({
      pool: poolListeners,
      connection: connectionListeners,
    });
  });
});
