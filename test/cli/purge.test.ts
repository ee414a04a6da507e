import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { insertRecord } from '../retention/records.js';
import { type CliDatabase, openCliDatabase } from './cli-database.js';
import { actionsOn, fencingTokenOf } from './operator-actions.js';
import { expectOneLineError, retrysafe } from './run-cli.js';

/** `retrysafe purge`: a record deleted only when confirmed, on the version seen, and recorded. */
describe('retrysafe purge', () => {
  let db: CliDatabase;
  beforeAll(async () => {
    db = await openCliDatabase();
  });
  afterAll(() => db.close());

  const identity = (key: string) => ['tenant-a', 'payments.create@1', key];
  const purge = (key: string, ...flags: string[]) =>
    retrysafe(['purge', ...identity(key), '--reason', 'test data (OPS-11)', ...flags, '--database-url', db.url]);
  const exists = async (key: string) =>
    (await db.database.query('SELECT 1 FROM retrysafe_operations WHERE key = $1', [key])).rows.length === 1;
  const completed = (key: string) =>
    insertRecord(db.database, { operation: 'payments.create@1', key, state: 'completed', mode: 'leased' });

  it('refuses without --yes, saying that a late retry runs the operation again, and deletes nothing', async () => {
    await completed('kept');
    const run = await purge('kept');
    expect(run.code).toBe(1);
    expect(expectOneLineError(run)).toBe(
      'retrysafe purge: purging tenant-a / payments.create@1 / kept (completed) deletes its record and steps: a retry of the key that arrives later is a new operation, so it runs again and its effect happens twice. Nothing was deleted; pass --yes to purge it.',
    );
    expect(await exists('kept')).toBe(true);
    expect(await actionsOn(db, 'kept')).toEqual([]);
  });

  it('with --yes deletes the record on the version seen and records who and why', async () => {
    await completed('gone');
    const token = await fencingTokenOf(db, 'gone');
    const run = await purge('gone', '--yes', '--fencing-token', String(token), '--actor', 'ops@example.com');
    expect(run.code).toBe(0);
    expect(run.stdout).toBe(
      'Purged tenant-a / payments.create@1 / gone: the key is unknown again, and a late retry of it runs the operation again.\n',
    );
    expect(await exists('gone')).toBe(false);
    expect(await actionsOn(db, 'gone')).toEqual([
      {
        actor: 'ops@example.com',
        action: 'purge',
        tenant: 'tenant-a',
        operation: 'payments.create@1',
        key: 'gone',
        message_id: null,
        reason: 'test data (OPS-11)',
        seen: { state: 'completed', fencingToken: token },
        detail: {},
      },
    ]);

    await completed('as-json');
    const json = await purge('as-json', '--yes', '--json');
    expect(json.code).toBe(0);
    expect(JSON.parse(json.stdout)).toEqual({ purged: true });
    expect(await exists('as-json')).toBe(false);
  });

  it('refuses a stale --fencing-token, a held lease, an unknown key (exit 1) and a blank reason (2), deleting nothing', async () => {
    await completed('stale');
    await insertRecord(db.database, {
      operation: 'payments.create@1',
      key: 'running',
      state: 'in_progress',
      mode: 'leased',
      leaseExpiresIn: 600,
    });
    const token = await fencingTokenOf(db, 'stale');
    const runs = await Promise.all([
      purge('stale', '--yes', '--fencing-token', String(token + 1)),
      purge('running', '--yes'),
      purge('nope', '--yes'),
      retrysafe(['purge', ...identity('stale'), '--reason', ' ', '--yes', '--database-url', db.url]),
    ]);
    expect(runs.map((run) => run.code)).toEqual([1, 1, 1, 2]);
    expect(runs.map(expectOneLineError)).toEqual([
      `retrysafe purge: tenant-a / payments.create@1 / stale changed since it was inspected: its fencing token is ${token}, not ${token + 1}; nothing was changed.`,
      'retrysafe purge: tenant-a / payments.create@1 / running is in_progress and its lease is still held: an attempt may be running it; nothing was changed.',
      'retrysafe purge: no operation tenant-a / payments.create@1 / nope.',
      "error: option '--reason <text>' argument ' ' is invalid. expected a value that is not blank.",
    ]);
    expect([await exists('stale'), await exists('running')]).toEqual([true, true]);
    expect([...(await actionsOn(db, 'stale')), ...(await actionsOn(db, 'running'))]).toEqual([]);
  });
});
