import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backingOffPayment, insertRecord } from '../retention/records.js';
import { unreachableDatabaseUrl } from '../observe/unreachable-database.js';
import { type CliDatabase, openCliDatabase } from './cli-database.js';
import { expectOneLineError, retrysafe } from './run-cli.js';

describe('retrysafe stuck', () => {
  let db: CliDatabase;
  beforeAll(async () => {
    db = await openCliDatabase();
  });
  afterAll(() => db.close());

  it('says so when nothing is stuck', async () => {
    const run = await retrysafe(['stuck', '--database-url', db.url]);
    expect(run.code).toBe(0);
    expect(run.stdout).toBe('No expired leases, no operations backing off and no unknown operations.\n');
  });

  it('lists expired leases and unknown outcomes with their age, and --older-than keeps the old ones', async () => {
    await insertRecord(db.database, {
      key: 'lease-gone',
      state: 'in_progress',
      mode: 'leased',
      leaseExpiresIn: -60,
      createdAgo: 3600,
    });
    await insertRecord(db.database, {
      key: 'lease-held',
      state: 'in_progress',
      mode: 'leased',
      leaseExpiresIn: 60,
      createdAgo: 3600,
    });
    await insertRecord(db.database, {
      key: 'nobody-knows',
      state: 'unknown',
      mode: 'transparent',
      createdAgo: 7200,
      reason: 'the process stopped',
    });
    await insertRecord(db.database, { key: 'fine', state: 'completed', createdAgo: 9000 });

    const [all, old, table] = await Promise.all([
      retrysafe(['stuck', '--json', '--database-url', db.url]),
      retrysafe(['stuck', '--json', '--older-than', '5400', '--database-url', db.url]),
      retrysafe(['stuck', '--database-url', db.url]),
    ]);

    expect(all.code).toBe(0);
    const rows = JSON.parse(all.stdout) as { kind: string; key: string; ageSeconds: number; reason?: string }[];
    expect(rows.map((row) => [row.kind, row.key])).toEqual([
      ['expired-lease', 'lease-gone'],
      ['unknown', 'nobody-knows'],
    ]);
    expect(rows[0]?.ageSeconds).toBeGreaterThanOrEqual(3600);
    expect(rows[1]).toMatchObject({ reason: 'the process stopped' });
    expect((JSON.parse(old.stdout) as { key: string }[]).map((row) => row.key)).toEqual(['nobody-knows']);
    expect(table.stdout).toMatch(/^KIND +AGE +TENANT +OPERATION +KEY +MODE +ATTEMPT +REASON\n/);
    expect(table.stdout).toMatch(/expired-lease +1h0m +tenant-a +orders\.create@1 +lease-gone +leased +1\n/);
  });

  it('fails in one line on a bad --older-than (2) and on an unreachable database (1)', async () => {
    const [bad, unreachable] = await Promise.all([
      retrysafe(['stuck', '--older-than', 'an-hour', '--database-url', db.url]),
      retrysafe(['stuck'], { DATABASE_URL: await unreachableDatabaseUrl() }),
    ]);
    expect(bad.code).toBe(2);
    expect(expectOneLineError(bad)).toBe(
      "error: option '--older-than <seconds>' argument 'an-hour' is invalid. expected a whole number of seconds from 0 to 3153600000.",
    );
    expect(unreachable.code).toBe(1);
    expect(expectOneLineError(unreachable)).toMatch(
      /^retrysafe stuck: The operation store failed: connect ECONNREFUSED/,
    );
  });

  it('lists an operation backing off after failed attempts, with its failures, next attempt and last error', async () => {
    const identity = { tenant: 'tenant-a', operation: 'payments.create@1', key: 'backing-off' };
    await backingOffPayment(db.database, identity, 6, 'provider unavailable (503)');

    const [json, table] = await Promise.all([
      retrysafe(['stuck', '--json', '--database-url', db.url]),
      retrysafe(['stuck', '--database-url', db.url]),
    ]);
    expect(json.stderr).toBe('');
    const rows = JSON.parse(json.stdout) as { kind: string; key: string; nextAttemptAt: string }[];
    const row = rows.find((listed) => listed.key === 'backing-off');
    expect(row).toMatchObject({
      kind: 'backing-off',
      ...identity,
      failures: 6,
      lastError: 'provider unavailable (503)',
    });
    expect(Date.parse(row?.nextAttemptAt ?? '')).toBeGreaterThan(Date.now() + 500_000);
    expect(table.stdout).toMatch(
      /\nbacking-off +\d+s +tenant-a +payments\.create@1 +backing-off +leased +1 +6 failures, next attempt in (9|10)m\d+s: provider unavailable \(503\)\n/,
    );
  });
});
