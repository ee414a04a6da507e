import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { insertRecord, recordsByKey } from '../retention/records.js';
import { unreachableDatabaseUrl } from '../observe/unreachable-database.js';
import { type CliDatabase, openCliDatabase } from './cli-database.js';
import { expectOneLineError, retrysafe } from './run-cli.js';

describe('retrysafe sweep', () => {
  let db: CliDatabase;
  beforeAll(async () => {
    db = await openCliDatabase();
  });
  afterAll(() => db.close());

  it('makes one pass of the sweeper in batches of --batch-size and reports what it did', async () => {
    for (let i = 0; i < 5; i++) await insertRecord(db.database, { key: `expired-${i}`, state: 'completed', responseExpiresIn: -1 });
    await insertRecord(db.database, { key: 'old-tombstone', state: 'tombstone', expiresIn: -1 });
    await insertRecord(db.database, { key: 'fresh', state: 'completed' });
    await insertRecord(db.database, { key: 'unknown', state: 'unknown', mode: 'leased', responseExpiresIn: -1, expiresIn: -1 });

    const run = await retrysafe(['sweep', '--batch-size', '2', '--json'], { DATABASE_URL: db.url });

    expect(run.code).toBe(0);
    // Tombstones: 2, 2, 1; deletions: 1.
    expect(JSON.parse(run.stdout)).toEqual({ tombstoned: 5, deleted: 1, batches: 4 });
    const rows = await recordsByKey(db.database);
    expect([...rows.values()].filter((row) => row.key.startsWith('expired-')).map((row) => row.state)).toEqual(Array(5).fill('tombstone'));
    expect(rows.has('old-tombstone')).toBe(false);
    expect(rows.get('fresh')?.state).toBe('completed');
    expect(rows.get('unknown')?.state).toBe('unknown');

    const again = await retrysafe(['sweep'], { DATABASE_URL: db.url });
    expect(again.stdout).toBe('Tombstoned 0 expired responses and deleted 0 expired tombstones in 2 batches.\n');
  });

  it('fails in one line on a bad --batch-size (2) and on an unreachable database (1)', async () => {
    const [bad, unreachable] = await Promise.all([
      retrysafe(['sweep', '--batch-size', '0', '--database-url', db.url]),
      retrysafe(['sweep', '--database-url', await unreachableDatabaseUrl()]),
    ]);
    expect(bad.code).toBe(2);
    expect(expectOneLineError(bad)).toBe("error: option '--batch-size <n>' argument '0' is invalid. expected a whole number of at least 1.");
    expect(unreachable.code).toBe(1);
    expect(expectOneLineError(unreachable)).toMatch(/^retrysafe sweep: The operation store failed: connect ECONNREFUSED/);
  });
});
