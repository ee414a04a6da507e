import { userInfo } from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { insertRecord, type RecordSpec } from '../retention/records.js';
import { unreachableDatabaseUrl } from '../observe/unreachable-database.js';
import { type CliDatabase, openCliDatabase } from './cli-database.js';
import { actionsOn, fencingTokenOf } from './operator-actions.js';
import { expectOneLineError, retrysafe } from './run-cli.js';

describe('retrysafe resolve', () => {
  let db: CliDatabase;
  beforeAll(async () => {
    db = await openCliDatabase();
  });
  afterAll(() => db.close());

  const identity = (key: string) => ['tenant-a', 'payments.create@1', key];
  const leasedPayment = (spec: RecordSpec) =>
    insertRecord(db.database, { operation: 'payments.create@1', mode: 'leased', ...spec });
  const record = async (key: string) =>
    (
      await db.database.query<{
        state: string;
        response_status: number;
        body: string | null;
        resource_ref: string | null;
        reason: string;
        response_seconds: number;
      }>(
        `SELECT state, response_status, convert_from(response_body, 'UTF8') AS body, resource_ref, reason,
           extract(epoch FROM response_expires_at - finished_at)::int AS response_seconds
         FROM retrysafe_operations WHERE key = $1`,
        [key],
      )
    ).rows[0];

  it('resolves an unknown operation with the given state, status, body, location and reason, once', async () => {
    await leasedPayment({ key: 'charged', state: 'unknown' });
    const resolve = [
      'resolve',
      ...identity('charged'),
      '--state',
      'completed',
      '--status',
      '201',
      '--body',
      '{"charge":"ch_9"}',
      '--location',
      '/payments/ch_9',
    ];

    const run = await retrysafe([...resolve, '--reason', 'found ch_9 in the provider dashboard'], {
      DATABASE_URL: db.url,
    });

    expect(run.code).toBe(0);
    expect(run.stdout).toBe('Resolved tenant-a / payments.create@1 / charged as completed with status 201.\n');
    expect(await record('charged')).toEqual({
      state: 'completed',
      response_status: 201,
      body: '{"charge":"ch_9"}',
      resource_ref: '/payments/ch_9',
      reason: 'found ch_9 in the provider dashboard',
      response_seconds: 24 * 3600,
    });

    const twice = await retrysafe([...resolve, '--reason', 'again'], { DATABASE_URL: db.url });
    expect(twice.code).toBe(1);
    expect(expectOneLineError(twice)).toBe(
      'retrysafe resolve: tenant-a / payments.create@1 / charged is completed, not unknown; nothing was changed.',
    );
    expect((await record('charged'))?.reason).toBe('found ch_9 in the provider dashboard');
  });

  it("takes the application's retention from --module", async () => {
    await insertRecord(db.database, {
      operation: 'payments.create@1',
      key: 'refused',
      state: 'unknown',
      mode: 'leased',
    });
    const run = await retrysafe(
      [
        'resolve',
        ...identity('refused'),
        '--state',
        'failed',
        '--status',
        '402',
        '--reason',
        'no charge at the provider',
        '--module',
        'test/cli/recovery-module.ts',
        '--json',
      ],
      { DATABASE_URL: db.url },
    );
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toEqual({ resolved: true, state: 'failed', status: 402 });
    expect(await record('refused')).toMatchObject({ state: 'failed', response_status: 402, response_seconds: 600 });
  });

  it('fails in one line on bad arguments (2), an absent operation (1) and an unreachable database (1)', async () => {
    const base = ['resolve', ...identity('whatever'), '--database-url', db.url];
    const valid = ['--state', 'failed', '--status', '402', '--reason', 'checked'];
    const runs = await Promise.all([
      retrysafe([...base, '--state', 'maybe', '--status', '402', '--reason', 'checked']),
      retrysafe([...base, '--state', 'failed', '--status', '99', '--reason', 'checked']),
      retrysafe([...base, ...valid, '--body', '{not json']),
      retrysafe([...base, '--state', 'failed', '--status', '402']),
      retrysafe([...base, ...valid]),
      retrysafe(['resolve', ...identity('whatever'), ...valid, '--database-url', await unreachableDatabaseUrl()]),
    ]);
    expect(runs.map((run) => run.code)).toEqual([2, 2, 2, 2, 1, 1]);
    expect(runs.map(expectOneLineError)).toEqual([
      "error: option '--state <state>' argument 'maybe' is invalid. Allowed choices are completed, failed.",
      "error: option '--status <status>' argument '99' is invalid. expected a whole number from 200 to 599.",
      "error: option '--body <json>' argument '{not json' is invalid. expected JSON.",
      "error: required option '--reason <text>' not specified",
      'retrysafe resolve: no operation tenant-a / payments.create@1 / whatever.',
      expect.stringMatching(/^retrysafe resolve: The operation store failed: connect ECONNREFUSED/),
    ]);
  });

  const unknown = (key: string) =>
    insertRecord(db.database, { operation: 'payments.create@1', key, state: 'unknown', mode: 'leased' });
  const resolveAs = (key: string, ...flags: string[]) =>
    retrysafe([
      'resolve',
      ...identity(key),
      '--state',
      'failed',
      '--status',
      '402',
      ...flags,
      '--database-url',
      db.url,
    ]);

  it('says what resumes an in_progress operation whose lease expired, with a stable code (exit 1)', async () => {
    await leasedPayment({ key: 'lease-gone', state: 'in_progress', leaseExpiresIn: -60 });
    const run = await retrysafe(
      ['resolve', ...identity('lease-gone'), '--state', 'failed', '--status', '402', '--reason', 'stuck?'],
      { DATABASE_URL: db.url },
    );
    expect(run.code).toBe(1);
    expect(expectOneLineError(run)).toBe(
      'retrysafe resolve: lease-expired: tenant-a / payments.create@1 / lease-gone is in_progress and its lease expired, not unknown; nothing was changed. The recovery worker resumes it: run "retrysafe recover --module <your operations module> --database-url <url>".',
    );
    expect((await record('lease-gone'))?.state).toBe('in_progress');
  });

  it('records who resolved it and why, with the version it acted on, through the operator actions', async () => {
    await unknown('audited');
    const token = await fencingTokenOf(db, 'audited');

    const run = await resolveAs('audited', '--reason', 'no charge (OPS-9)', '--fencing-token', String(token));

    expect(run.code).toBe(0);
    expect(await actionsOn(db, 'audited')).toEqual([
      {
        actor: userInfo().username,
        action: 'resolve',
        tenant: 'tenant-a',
        operation: 'payments.create@1',
        key: 'audited',
        message_id: null,
        reason: 'no charge (OPS-9)',
        seen: { state: 'unknown', fencingToken: token },
        detail: { state: 'failed', status: 402 },
      },
    ]);

    await unknown('by-name');
    const named = await resolveAs('by-name', '--reason', 'checked', '--actor', 'ops@example.com');
    expect(named.code).toBe(0);
    expect(await actionsOn(db, 'by-name')).toMatchObject([{ actor: 'ops@example.com', reason: 'checked' }]);
  });

  it('refuses a stale --fencing-token (exit 1), changing and recording nothing', async () => {
    await unknown('taken-over');
    const seen = (await fencingTokenOf(db, 'taken-over')) - 1;
    const run = await resolveAs('taken-over', '--reason', 'no charge', '--fencing-token', String(seen));
    expect(run.code).toBe(1);
    expect(expectOneLineError(run)).toBe(
      `retrysafe resolve: tenant-a / payments.create@1 / taken-over changed since it was inspected: its fencing token is ${seen + 1}, not ${seen}; nothing was changed.`,
    );
    expect(await record('taken-over')).toMatchObject({ state: 'unknown', reason: 'the provider did not answer' });
    expect(await actionsOn(db, 'taken-over')).toEqual([]);
  });
});
