import { randomUUID } from 'node:crypto';
import { userInfo } from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fingerprint } from '../../src/core/fingerprint.js';
import type { OperationMode } from '../../src/core/record.js';
import { postgresStore } from '../../src/postgres/index.js';
import { unreachableDatabaseUrl } from '../observe/unreachable-database.js';
import { backingOffPayment, insertRecord } from '../retention/records.js';
import { type CliDatabase, openCliDatabase } from './cli-database.js';
import { actionsOn, fencingTokenOf } from './operator-actions.js';
import { expectOneLineError, retrysafe } from './run-cli.js';

describe('retrysafe retry', () => {
  let db: CliDatabase;
  beforeAll(async () => {
    db = await openCliDatabase();
    await db.database.query(
      'CREATE TABLE recovered_payments (key text PRIMARY KEY, charge text NOT NULL, amount integer NOT NULL)',
    );
  });
  afterAll(() => db.close());

  const identity = (key: string) => ['tenant-a', 'payments.create@1', key];
  /** An operation whose last attempt gave up after a step may have taken effect. */
  async function unknown(mode: Exclude<OperationMode, 'atomic'>): Promise<string> {
    const key = randomUUID();
    const store = postgresStore(db.database);
    const claim = await store.claimLease({
      identity: { tenant: 'tenant-a', operation: 'payments.create@1', key },
      fingerprint: fingerprint({ amount: 900 }),
      input: { amount: 900 },
      mode,
      ownerToken: randomUUID(),
      leaseSeconds: 60,
    });
    if (claim.kind !== 'claimed') throw new Error('expected a new lease');
    await store.markUnknown(claim.lease, 'the provider lookup failed');
    return key;
  }
  const record = async (key: string) =>
    (
      await db.database.query<{ state: string; attempt: number; reason: string | null }>(
        'SELECT state, attempt, reason FROM retrysafe_operations WHERE key = $1',
        [key],
      )
    ).rows[0];

  it('puts an unknown operation back into recovery, and the recovery worker then finishes it', async () => {
    const key = await unknown('leased');

    const run = await retrysafe(['retry', ...identity(key), '--reason', 'the provider lookup answers again'], {
      DATABASE_URL: db.url,
    });

    expect(run.code).toBe(0);
    expect(run.stdout).toBe(
      `Put tenant-a / payments.create@1 / ${key} back into recovery: the recovery worker or a retry of the key resumes it.\n`,
    );
    expect(await record(key)).toEqual({
      state: 'in_progress',
      attempt: 1,
      reason: 'the provider lookup answers again',
    });

    const recovered = await retrysafe(['recover', '--once', '--json', '--module', 'test/cli/recovery-module.ts'], {
      DATABASE_URL: db.url,
    });
    expect(recovered.code).toBe(0);
    expect(JSON.parse(recovered.stdout)).toMatchObject({ examined: 1, completed: 1 });
    expect(await record(key)).toMatchObject({ state: 'completed', attempt: 2 });
    expect(
      (
        await db.database.query<{ n: number }>('SELECT count(*)::int AS n FROM recovered_payments WHERE key = $1', [
          key,
        ])
      ).rows[0]?.n,
    ).toBe(1);
  });

  it('answers --json, and changes nothing the second time (exit 1)', async () => {
    const key = await unknown('leased');
    const first = await retrysafe(['retry', ...identity(key), '--reason', 'fixed', '--json', '--database-url', db.url]);
    expect(first.code).toBe(0);
    expect(JSON.parse(first.stdout)).toEqual({ retried: true });
    const twice = await retrysafe(['retry', ...identity(key), '--reason', 'again', '--json', '--database-url', db.url]);
    expect(twice.code).toBe(1);
    expect(expectOneLineError(twice)).toBe(
      `retrysafe retry: lease-expired: tenant-a / payments.create@1 / ${key} is in_progress and its lease expired, not unknown; nothing was changed. The recovery worker resumes it: run "retrysafe recover --module <your operations module> --database-url <url>".`,
    );
    expect((await record(key))?.reason).toBe('fixed');
  });

  it('says what resumes an operation backing off after failed attempts, with a stable code (exit 1)', async () => {
    const key = 'backing-off';
    await backingOffPayment(
      db.database,
      { tenant: 'tenant-a', operation: 'payments.create@1', key },
      6,
      'provider unavailable (503)',
    );
    const run = await retrysafe(['retry', ...identity(key), '--reason', 'stuck?', '--database-url', db.url]);
    expect(run.code).toBe(1);
    expect(expectOneLineError(run)).toMatch(
      /^retrysafe retry: backing-off: tenant-a \/ payments\.create@1 \/ backing-off is in_progress and backing off after 6 failed attempts \(last error: provider unavailable \(503\)\) until \d{4}-\d\d-\d\dT[\d:.]+Z, not unknown; nothing was changed\. The recovery worker resumes it then: run "retrysafe recover --module <your operations module> --database-url <url>"\.$/,
    );
    expect(await record(key)).toMatchObject({ state: 'in_progress', reason: null });
  });

  it('fails in one line on bad arguments (2), an absent, unresumable or finished operation (1) and an unreachable database (1)', async () => {
    const transparent = await unknown('transparent');
    await insertRecord(db.database, {
      operation: 'payments.create@1',
      key: 'done',
      state: 'completed',
      mode: 'leased',
    });
    const runs = await Promise.all([
      retrysafe(['retry', ...identity('whatever'), '--database-url', db.url]),
      retrysafe(['retry', 'tenant-a', 'payments.create@1', '--reason', 'x', '--database-url', db.url]),
      retrysafe(['retry', ...identity('whatever'), '--reason', 'fixed', '--database-url', db.url]),
      retrysafe(['retry', ...identity(transparent), '--reason', 'fixed', '--database-url', db.url]),
      retrysafe(['retry', ...identity('done'), '--reason', 'fixed', '--database-url', db.url]),
      retrysafe([
        'retry',
        ...identity('whatever'),
        '--reason',
        'fixed',
        '--database-url',
        await unreachableDatabaseUrl(),
      ]),
    ]);
    expect(runs.map((run) => run.code)).toEqual([2, 2, 1, 1, 1, 1]);
    expect(runs.map(expectOneLineError)).toEqual([
      "error: required option '--reason <text>' not specified",
      "error: missing required argument 'key'",
      'retrysafe retry: no operation tenant-a / payments.create@1 / whatever.',
      `retrysafe retry: tenant-a / payments.create@1 / ${transparent} cannot run again (a transparent route, or its input is gone); resolve it with "retrysafe resolve".`,
      'retrysafe retry: tenant-a / payments.create@1 / done is completed, not unknown; nothing was changed.',
      expect.stringMatching(/^retrysafe retry: The operation store failed: connect ECONNREFUSED/),
    ]);
    expect(await record(transparent)).toMatchObject({ state: 'unknown' });
  });

  const retryAs = (key: string, ...flags: string[]) =>
    retrysafe(['retry', ...identity(key), ...flags, '--database-url', db.url]);

  it('records who retried it and why, with the version it acted on, through the operator actions', async () => {
    const key = await unknown('leased');
    const token = await fencingTokenOf(db, key);
    const run = await retryAs(key, '--reason', 'provider back (OPS-43)', '--fencing-token', String(token));
    expect(run.code).toBe(0);
    expect(await actionsOn(db, key)).toEqual([
      {
        actor: userInfo().username,
        action: 'retry',
        tenant: 'tenant-a',
        operation: 'payments.create@1',
        key,
        message_id: null,
        reason: 'provider back (OPS-43)',
        seen: { state: 'unknown', fencingToken: token },
        detail: {},
      },
    ]);
  });

  it('refuses a stale --fencing-token (exit 1), changing and recording nothing', async () => {
    const key = await unknown('leased');
    const token = await fencingTokenOf(db, key);
    const run = await retryAs(
      key,
      '--reason',
      'fixed',
      '--actor',
      'ops@example.com',
      '--fencing-token',
      String(token + 1),
    );
    expect(run.code).toBe(1);
    expect(expectOneLineError(run)).toBe(
      `retrysafe retry: tenant-a / payments.create@1 / ${key} changed since it was inspected: its fencing token is ${token}, not ${token + 1}; nothing was changed.`,
    );
    expect(await record(key)).toEqual({ state: 'unknown', attempt: 1, reason: 'the provider lookup failed' });
    expect(await actionsOn(db, key)).toEqual([]);
  });
});
