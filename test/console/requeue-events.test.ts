import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { runOperatorAction } from '../../src/operator/operator-actions.js';
import { idempotency } from '../../src/modes/idempotency.js';
import { operatorStore } from '../../src/postgres/postgres-operator-store.js';
import { postgresStore } from '../../src/postgres/postgres-store.js';
import type { SqlClient } from '../../src/store/sql-client.js';
import { type ReceivedWebhook, receiveWebhook, signWebhook, WebhookWorker } from '../../src/webhooks/index.js';
import { type Engine, engines } from '../support/engines.js';
import { applyPaymentEvent, PAYMENTS_TABLE } from '../webhooks/payments.js';

/**
 * An operator requeues a webhook event the worker parked: only the event as
 * the page showed it (parked at that instant), recorded with who and why, and
 * the worker then processes it once.
 */
const SECRET = `whsec_${randomBytes(24).toString('base64')}`;
const RECEIVER = 'payments';
const OPS = { actor: 'ops@example.com', reason: 'the ledger is open again (OPS-7)' };

describe.each(engines)('requeueing a parked webhook event on $name', (factory) => {
  let engine: Engine;

  beforeAll(async () => {
    engine = await factory.open();
    await engine.database.query(PAYMENTS_TABLE);
  });
  afterAll(() => engine.close());
  beforeEach(async () => {
    await engine.database.query(
      'TRUNCATE retrysafe_webhook_events, retrysafe_inbox, retrysafe_operator_actions, payments',
    );
  });

  const operators = () => operatorStore(engine.database);
  const context = () => ({ config: idempotency({ store: postgresStore(engine.database) }), operators: operators() });
  const event = { receiver: RECEIVER, id: 'evt_poison' };

  async function receive(id: string): Promise<void> {
    const timestamp = Math.floor(Date.now() / 1000);
    const rawBody = JSON.stringify({ type: 'payment.succeeded', charge: 'ch_7', version: 1 });
    await receiveWebhook(
      engine.database,
      { receiver: RECEIVER, secrets: SECRET },
      {
        headers: {
          'content-type': 'application/json',
          'webhook-id': id,
          'webhook-timestamp': String(timestamp),
          'webhook-signature': signWebhook(SECRET, id, timestamp, rawBody),
        },
        rawBody: Buffer.from(rawBody, 'utf8'),
      },
    );
  }

  /** A worker whose handler fails, parking the event at its first failure, or one that applies the payment. */
  function worker(failing: boolean): WebhookWorker<SqlClient> {
    return new WebhookWorker({
      database: engine.database,
      receiver: RECEIVER,
      retry: { maxAttempts: 1 },
      async handler(received: ReceivedWebhook, tx: SqlClient) {
        if (failing) throw new Error('the ledger is closed');
        await applyPaymentEvent(received, tx);
      },
    });
  }

  const stored = async () =>
    (
      await engine.database.query<{ state: string; attempts: number }>(
        'SELECT state, attempts FROM retrysafe_webhook_events',
      )
    ).rows;
  const recorded = async () =>
    (
      await engine.database.query(
        'SELECT actor, action, tenant, message_id, receiver, event_id, reason, seen FROM retrysafe_operator_actions ORDER BY id',
      )
    ).rows;

  async function parkedVersion(): Promise<string> {
    const { items } = await operators().parkedEvents({ limit: 10 });
    expect(items).toHaveLength(1);
    const [parked] = items;
    expect(parked).toMatchObject({ ...event, attempts: 1, lastError: 'Error: the ledger is closed' });
    return parked?.version ?? '';
  }

  it('puts a parked event back with a fresh count of attempts, records who and why, and the worker processes it', async () => {
    await receive(event.id);
    expect(await worker(true).runOnce()).toMatchObject({ parked: 1 });
    const version = await parkedVersion();
    expect(version).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);

    expect(await runOperatorAction(context(), { action: 'requeue-event', event, seen: version }, OPS)).toEqual({
      done: true,
    });
    expect(await stored()).toEqual([{ state: 'received', attempts: 0 }]);
    expect((await operators().parkedEvents({ limit: 10 })).items).toEqual([]);
    expect(await recorded()).toEqual([
      {
        actor: OPS.actor,
        action: 'requeue',
        tenant: null,
        message_id: null,
        receiver: RECEIVER,
        event_id: event.id,
        reason: OPS.reason,
        seen: { parkedAt: version },
      },
    ]);
    expect(await worker(false).runOnce()).toMatchObject({ processed: 1, parked: 0 });
    expect((await engine.database.query('SELECT charge, status FROM payments')).rows).toEqual([
      { charge: 'ch_7', status: 'succeeded' },
    ]);
  });

  it('refuses a requeue drawn before the event was requeued and parked again, changing nothing', async () => {
    await receive(event.id);
    await worker(true).runOnce();
    const first = await parkedVersion();
    expect((await runOperatorAction(context(), { action: 'requeue-event', event, seen: first }, OPS)).done).toBe(true);
    // The same page posted twice: the event is no longer parked.
    expect(await runOperatorAction(context(), { action: 'requeue-event', event, seen: first }, OPS)).toEqual({
      done: false,
      why: 'changed',
    });
    await worker(true).runOnce();
    const second = await parkedVersion();
    expect(second).not.toBe(first);
    // A page drawn at the first parking, posted after the second: refused, the event stays parked.
    expect(await runOperatorAction(context(), { action: 'requeue-event', event, seen: first }, OPS)).toEqual({
      done: false,
      why: 'changed',
    });
    expect(await runOperatorAction(context(), { action: 'requeue-event', event, seen: 'yesterday' }, OPS)).toEqual({
      done: false,
      why: 'changed',
    });
    expect(await stored()).toEqual([{ state: 'dead', attempts: 1 }]);
    expect(await recorded()).toHaveLength(1);
    expect((await runOperatorAction(context(), { action: 'requeue-event', event, seen: second }, OPS)).done).toBe(true);
    expect(await recorded()).toHaveLength(2);
  });

  it('requeues an event parked before parking times were kept, by its empty version', async () => {
    await receive(event.id);
    await worker(true).runOnce();
    await engine.database.query('UPDATE retrysafe_webhook_events SET parked_at = NULL');
    expect(await parkedVersion()).toBe('');
    expect(await runOperatorAction(context(), { action: 'requeue-event', event, seen: '' }, OPS)).toEqual({
      done: true,
    });
    expect(await stored()).toEqual([{ state: 'received', attempts: 0 }]);
  });
});
