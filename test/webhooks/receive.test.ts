import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { fromPg } from '../../src/postgres/index.js';
import type { SqlClient } from '../../src/store/sql-client.js';
import {
  pruneWebhookEvents,
  type ReceivedWebhook,
  receiveWebhook,
  signWebhook,
  WebhookWorker,
  type WebhookWorkerOptions,
} from '../../src/webhooks/index.js';
import { type Engine, engines } from '../support/engines.js';
import { applyPaymentEvent, PAYMENTS_TABLE } from './payments.js';

const SECRET = `whsec_${randomBytes(24).toString('base64')}`;
const RECEIVER = 'payments';

/** A delivery as the sender makes it: signed now (or at `timestamp`) over the exact body. */
function delivery(id: string, payload: unknown, options: { timestamp?: number; secret?: string; body?: string } = {}) {
  const timestamp = options.timestamp ?? Math.floor(Date.now() / 1000);
  const rawBody = options.body ?? JSON.stringify(payload);
  const headers = {
    'content-type': 'application/json',
    'webhook-id': id,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': signWebhook(options.secret ?? SECRET, id, timestamp, rawBody),
  };
  return { headers, rawBody: Buffer.from(rawBody, 'utf8') };
}

describe.each(engines)('the webhook receiver and its worker on $name', (factory) => {
  let engine: Engine;

  beforeAll(async () => {
    engine = await factory.open();
    await engine.database.query(PAYMENTS_TABLE);
  });
  afterAll(() => engine.close());
  beforeEach(async () => {
    await engine.database.query('TRUNCATE retrysafe_webhook_events, retrysafe_inbox, payments');
  });

  const receive = (d: ReturnType<typeof delivery>) =>
    receiveWebhook(engine.database, { receiver: RECEIVER, secrets: SECRET }, d);
  const events = async () =>
    (
      await engine.database.query<{ id: string; state: string; attempts: number }>(
        'SELECT id, state, attempts FROM retrysafe_webhook_events ORDER BY id',
      )
    ).rows;
  const problemType = (body: Uint8Array) => (JSON.parse(Buffer.from(body).toString('utf8')) as { type: string }).type;

  /** A handler that applies payment events, keeping the newest state by the event's version: events may come out of order. */
  function paymentsWorker(calls: string[], options: Partial<WebhookWorkerOptions<SqlClient>> = {}) {
    return new WebhookWorker({
      database: engine.database,
      receiver: RECEIVER,
      async handler(event: ReceivedWebhook, tx: SqlClient) {
        calls.push(event.id);
        await applyPaymentEvent(event, tx);
      },
      ...options,
    });
  }

  it('records a verified delivery before answering 202, and accepts a redelivery without recording it twice', async () => {
    const first = await receive(delivery('evt_1', { type: 'payment.succeeded', charge: 'ch_1' }));
    expect(first).toMatchObject({ kind: 'recorded', id: 'evt_1', status: 202 });
    expect(await events()).toEqual([{ id: 'evt_1', state: 'received', attempts: 0 }]);
    const again = await receive(delivery('evt_1', { type: 'payment.succeeded', charge: 'ch_1' }));
    expect(again).toMatchObject({ kind: 'duplicate', id: 'evt_1', status: 202 });
    expect(await events()).toHaveLength(1);
  });

  it('answers 401 problem+json and stores nothing for a forged, an unsigned or a stale delivery', async () => {
    const forged = await receive(
      delivery(
        'evt_forged',
        { type: 'payment.succeeded', charge: 'ch_1' },
        { secret: `whsec_${randomBytes(24).toString('base64')}` },
      ),
    );
    expect(forged).toMatchObject({
      kind: 'rejected',
      code: 'webhook-signature-invalid',
      status: 401,
      headers: { 'content-type': 'application/problem+json' },
    });
    expect(problemType(forged.body)).toBe('https://retrysafe.dev/problems/webhook-signature-invalid');

    const { 'webhook-signature': _signature, ...unsignedHeaders } = delivery('evt_unsigned', {}).headers;
    expect(
      await receive({ headers: unsignedHeaders, rawBody: Buffer.from('{}') } as ReturnType<typeof delivery>),
    ).toMatchObject({ kind: 'rejected', code: 'webhook-signature-invalid', status: 401 });

    const stale = await receive(
      delivery(
        'evt_stale',
        { type: 'payment.succeeded', charge: 'ch_1' },
        { timestamp: Math.floor(Date.now() / 1000) - 301 },
      ),
    );
    expect(stale).toMatchObject({ kind: 'rejected', code: 'webhook-timestamp-invalid', status: 401 });
    expect(problemType(stale.body)).toBe('https://retrysafe.dev/problems/webhook-timestamp-invalid');
    expect(await events()).toEqual([]);
  });

  it('answers 400 for a signed body that is not JSON, or that PostgreSQL cannot store as JSON', async () => {
    expect(await receive(delivery('evt_text', undefined, { body: 'payment succeeded' }))).toMatchObject({
      kind: 'rejected',
      code: 'webhook-payload-invalid',
      status: 400,
    });
    expect(await receive(delivery('evt_nul', undefined, { body: '{"note":"\\u0000"}' }))).toMatchObject({
      kind: 'rejected',
      code: 'webhook-payload-invalid',
      status: 400,
    });
    expect(await events()).toEqual([]);
  });

  it('processes each recorded event once, through the inbox, whatever the order and the number of deliveries', async () => {
    const succeeded = delivery('evt_succeeded', { type: 'payment.succeeded', charge: 'ch_1', version: 1 });
    const refunded = delivery('evt_refunded', { type: 'payment.refunded', charge: 'ch_1', version: 2 });
    // The later event arrives first; the earlier one three times, once after processing.
    expect((await receive(refunded)).kind).toBe('recorded');
    expect((await receive(succeeded)).kind).toBe('recorded');
    expect((await receive(succeeded)).kind).toBe('duplicate');
    const calls: string[] = [];
    const worker = paymentsWorker(calls);
    expect(await worker.runOnce()).toEqual({ processed: 2, duplicates: 0, failed: 0, parked: 0 });
    expect((await receive(succeeded)).kind).toBe('duplicate');
    expect(await worker.runOnce()).toEqual({ processed: 0, duplicates: 0, failed: 0, parked: 0 });

    expect(calls.sort()).toEqual(['evt_refunded', 'evt_succeeded']);
    expect((await engine.database.query('SELECT charge, status FROM payments')).rows).toEqual([
      { charge: 'ch_1', status: 'refunded' },
    ]);
    expect((await events()).map((event) => event.state)).toEqual(['processed', 'processed']);
    expect(
      (
        await engine.database.query('SELECT message_id FROM retrysafe_inbox WHERE consumer = $1 ORDER BY message_id', [
          RECEIVER,
        ])
      ).rows,
    ).toEqual([{ message_id: 'evt_refunded' }, { message_id: 'evt_succeeded' }]);
  });

  it("processes events in the data layer's own transaction, with the inbox record and the processed mark", async () => {
    const { native } = engine;
    expect(
      (await receive(delivery('evt_native', { type: 'payment.succeeded', charge: 'ch_9', version: 1 }))).kind,
    ).toBe('recorded');
    const worker = new WebhookWorker({
      database: native,
      receiver: RECEIVER,
      handler: (event, tx) => applyPaymentEvent(event, native.runner(tx)),
    });
    expect(await worker.runOnce()).toEqual({ processed: 1, duplicates: 0, failed: 0, parked: 0 });
    expect(await worker.runOnce()).toEqual({ processed: 0, duplicates: 0, failed: 0, parked: 0 });
    expect((await engine.database.query('SELECT charge, status FROM payments')).rows).toEqual([
      { charge: 'ch_9', status: 'succeeded' },
    ]);
    expect(await events()).toEqual([{ id: 'evt_native', state: 'processed', attempts: 0 }]);
  });

  it('does not process again an event delivered after its record was pruned: the inbox remembers it', async () => {
    const event = delivery('evt_late', { type: 'payment.succeeded', charge: 'ch_2', version: 1 });
    const calls: string[] = [];
    await receive(event);
    await paymentsWorker(calls).runOnce();
    await engine.database.query("UPDATE retrysafe_webhook_events SET processed_at = now() - interval '1 day'");
    expect(await pruneWebhookEvents(engine.database, { olderThanSeconds: 3600 })).toBe(1);
    expect((await receive(event)).kind).toBe('recorded');
    expect(await paymentsWorker(calls).runOnce()).toEqual({ processed: 0, duplicates: 1, failed: 0, parked: 0 });
    expect(calls).toEqual(['evt_late']);
    expect(await events()).toEqual([{ id: 'evt_late', state: 'processed', attempts: 0 }]);
  });

  it('retries a failing handler after a backoff, commits none of its writes, and parks the event after its last attempt', async () => {
    await receive(delivery('evt_poison', { type: 'payment.succeeded', charge: 'ch_3' }));
    const calls: string[] = [];
    const failing = paymentsWorker(calls, {
      retry: { maxAttempts: 2, baseDelayMs: 60_000, maxDelayMs: 60_000, random: () => 0.5 },
      handler: async (event, tx) => {
        calls.push(event.id);
        await tx.query("INSERT INTO payments (charge, status, version) VALUES ('ch_3', 'succeeded', 1)");
        throw new Error('the ledger is closed');
      },
    });
    expect(await failing.runOnce()).toEqual({ processed: 0, duplicates: 0, failed: 1, parked: 0 });
    expect(await events()).toEqual([{ id: 'evt_poison', state: 'received', attempts: 1 }]);
    expect(await failing.runOnce()).toEqual({ processed: 0, duplicates: 0, failed: 0, parked: 0 });
    await engine.database.query('UPDATE retrysafe_webhook_events SET next_attempt_at = now()');
    expect(await failing.runOnce()).toEqual({ processed: 0, duplicates: 0, failed: 0, parked: 1 });
    const [parked] = (
      await engine.database.query<{ state: string; last_error: string }>(
        'SELECT state, last_error FROM retrysafe_webhook_events',
      )
    ).rows;
    expect(parked).toEqual({ state: 'dead', last_error: 'Error: the ledger is closed' });
    expect(calls).toEqual(['evt_poison', 'evt_poison']);
    expect((await engine.database.query('SELECT 1 FROM payments')).rows).toEqual([]);
    expect((await engine.database.query('SELECT 1 FROM retrysafe_inbox')).rows).toEqual([]);
  });

  it('lets workers side by side process each event exactly once', async () => {
    const ids = Array.from({ length: 30 }, (_, i) => `evt_${i}`);
    for (const id of ids) await receive(delivery(id, { type: 'payment.succeeded', charge: `ch_${id}`, version: 1 }));
    const calls: string[] = [];
    const workers = [paymentsWorker(calls, { batchSize: 5 }), paymentsWorker(calls, { batchSize: 5 })];
    for (;;) {
      const reports = await Promise.all(workers.map((worker) => worker.runOnce()));
      if (reports.every((report) => report.processed === 0)) break;
    }
    expect(calls.sort()).toEqual([...ids].sort());
    expect(
      (
        await engine.database.query<{ n: number }>(
          "SELECT count(*)::int AS n FROM retrysafe_webhook_events WHERE state = 'processed'",
        )
      ).rows[0]?.n,
    ).toBe(30);
  });
});

describe('the webhook receiver with its store down', () => {
  const pool = new pg.Pool({
    connectionString: 'postgres://nobody@127.0.0.1:1/nothing',
    connectionTimeoutMillis: 2000,
  });
  afterAll(() => pool.end());

  it('answers 503 with Retry-After, so the sender tries again later', async () => {
    const receipt = await receiveWebhook(
      fromPg(pool),
      { receiver: RECEIVER, secrets: SECRET, retryAfterSeconds: 5 },
      delivery('evt_1', { type: 'payment.succeeded' }),
    );
    expect(receipt).toMatchObject({
      kind: 'unavailable',
      status: 503,
      headers: { 'retry-after': '5', 'content-type': 'application/problem+json' },
    });
  });
});
