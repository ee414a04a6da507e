import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CliDatabase, openCliDatabase } from './cli-database.js';
import { expectOneLineError, retrysafe } from './run-cli.js';

interface Listed {
  readonly items: readonly { readonly receiver: string; readonly id: string; readonly parkedAt: string }[];
}

/** `retrysafe parked-events` and `retrysafe requeue-event`: a parked webhook event put back only as it was listed. */
describe('retrysafe parked-events and requeue-event', () => {
  let db: CliDatabase;
  beforeAll(async () => {
    db = await openCliDatabase();
    await db.database.query(
      `INSERT INTO retrysafe_webhook_events (receiver, id, payload, sent_at, state, attempts, last_error, parked_at)
       VALUES ('payments', 'evt_1', '{}', now(), 'dead', 8, 'Error: the ledger is closed', now())`,
    );
  });
  afterAll(() => db.close());

  const state = async () =>
    (
      await db.database.query<{ state: string; attempts: number }>(
        'SELECT state, attempts FROM retrysafe_webhook_events',
      )
    ).rows;

  it('lists the parked event with its parking time, requeues it by that time with who and why, and refuses it again', async () => {
    const list = await retrysafe(['parked-events', '--json', '--database-url', db.url]);
    expect(list.code).toBe(0);
    const [event] = (JSON.parse(list.stdout) as Listed).items;
    expect(event).toMatchObject({ receiver: 'payments', id: 'evt_1' });
    const parkedAt = event?.parkedAt ?? '';
    expect(parkedAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);

    const args = ['requeue-event', 'payments', 'evt_1', '--parked-at', parkedAt, '--reason', 'ledger reopened'];
    const requeued = await retrysafe([...args, '--actor', 'ops@example.com', '--database-url', db.url]);
    expect(requeued.code).toBe(0);
    expect(requeued.stdout).toBe('Requeued payments/evt_1: the webhook worker processes it again.\n');
    expect(await state()).toEqual([{ state: 'received', attempts: 0 }]);
    expect(
      (await db.database.query('SELECT actor, action, receiver, event_id, reason FROM retrysafe_operator_actions'))
        .rows,
    ).toEqual([
      {
        actor: 'ops@example.com',
        action: 'requeue',
        receiver: 'payments',
        event_id: 'evt_1',
        reason: 'ledger reopened',
      },
    ]);

    // The same command again: the event is no longer parked at that time.
    const again = await retrysafe([...args, '--database-url', db.url]);
    expect(again.code).toBe(1);
    expect(expectOneLineError(again)).toContain('payments/evt_1 is not parked at');
    expect((await db.database.query('SELECT 1 FROM retrysafe_operator_actions')).rows).toHaveLength(1);
    const none = await retrysafe(['parked-events', '--database-url', db.url]);
    expect(none.stdout).toBe('No parked webhook events.\n');
  });
});
