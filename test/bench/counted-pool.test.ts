import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { countedPool } from '../../bench/server/counted-pool.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';

/**
 * The bench's count of round trips on a real node-postgres pool: two
 * statements issued together share one only where node-postgres pipelines.
 */
let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await db.drop();
});

async function tripsOfTwoIssuedTogether(pipeline: boolean): Promise<number> {
  const { pool, roundTrips } = countedPool(db.url, 1, false, pipeline);
  try {
    const client = await pool.connect();
    const before = roundTrips();
    await Promise.all([client.query('SELECT 1'), client.query('SELECT 2')]);
    client.release();
    return roundTrips() - before;
  } finally {
    await pool.end();
  }
}

describe('countedPool', () => {
  it('counts a round trip per statement on a plain pool, which sends each once the one before it is answered', async () => {
    expect(await tripsOfTwoIssuedTogether(false)).toBe(2);
  });

  it('counts statements issued together as one round trip on a pool in pipeline mode', async () => {
    expect(await tripsOfTwoIssuedTogether(true)).toBe(1);
  });
});
