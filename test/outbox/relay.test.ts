import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { isRetrysafeError } from '../../src/core/errors.js';
import {
  deadLetters,
  enqueue,
  outboxBacklog,
  pruneOutbox,
  Relay,
  type RelayOptions,
  retryDeadLetter,
  webhookTransport,
} from '../../src/outbox/index.js';
import type { SqlClient } from '../../src/store/sql-client.js';
import { type Engine, engines } from '../support/engines.js';
import { startWebhookSink, type WebhookSink } from './support/webhook-sink.js';

const SECRET = `whsec_${Buffer.from('relay test secret').toString('base64')}`;

describe.each(engines)('the outbox relay on $name', (factory) => {
  let engine: Engine;
  let sink: WebhookSink;

  beforeAll(async () => {
    engine = await factory.open();
    sink = await startWebhookSink();
  });
  afterAll(async () => {
    await sink.close();
    await engine.close();
  });
  beforeEach(async () => {
    sink.deliveries.length = 0;
    await engine.database.query('DELETE FROM retrysafe_outbox');
  });

  const relay = (options: Partial<RelayOptions<SqlClient>> = {}) =>
    new Relay({
      database: engine.database,
      transport: webhookTransport({ url: sink.url, secrets: SECRET }),
      ...options,
    });
  const add = (topic = 'orders.created', payload: unknown = { order: 1 }, id?: string) =>
    engine.database.transaction((tx) => enqueue(tx, { id, topic, payload }));
  const row = async (id: string) =>
    (
      await engine.database.query<{ state: string; attempts: number; last_error: string | null; due: boolean }>(
        'SELECT state, attempts, last_error, next_attempt_at <= now() AS due FROM retrysafe_outbox WHERE id = $1',
        [id],
      )
    ).rows[0];
  const deliveredIds = () => sink.deliveries.map((delivery) => delivery.headers['webhook-id']);

  it('publishes a committed message under its id, with its topic, headers and payload, and marks it delivered', async () => {
    const id = await engine.database.transaction((tx) =>
      enqueue(tx, { topic: 'orders.created', headers: { 'x-tenant': 'tenant-a' }, payload: { order: 7, total: 12.5 } }),
    );
    expect(await relay().runOnce()).toEqual({ claimed: 1, delivered: 1, duplicates: 0, failed: 0, parked: 0 });
    expect(deliveredIds()).toEqual([id]);
    expect(sink.deliveries[0]?.headers['x-tenant']).toBe('tenant-a');
    expect(JSON.parse(sink.deliveries[0]!.body.toString('utf8'))).toEqual({ order: 7, total: 12.5 });
    expect(await row(id)).toMatchObject({ state: 'delivered', attempts: 1 });
    expect((await relay().runOnce()).claimed).toBe(0);
  });

  it('publishes nothing from a transaction that rolled back', async () => {
    await expect(
      engine.database.transaction(async (tx) => {
        await enqueue(tx, { topic: 'orders.created', payload: {} });
        throw new Error('the business change failed');
      }),
    ).rejects.toThrow('the business change failed');
    expect((await engine.database.query('SELECT 1 FROM retrysafe_outbox')).rows).toHaveLength(0);
    expect((await relay().runOnce()).claimed).toBe(0);
  });

  it("enqueues in the data layer's own transaction, through the database that handed it out, and publishes what committed", async () => {
    const { native } = engine;
    const id = await native.transaction((_sql, tx) =>
      enqueue(native, tx, { topic: 'orders.created', payload: { order: 8 } }),
    );
    await expect(
      native.transaction(async (_sql, tx) => {
        await enqueue(native, tx, { topic: 'orders.created', payload: { order: 9 } });
        throw new Error('the business change failed');
      }),
    ).rejects.toThrow('the business change failed');
    expect(await relay().runOnce()).toEqual({ claimed: 1, delivered: 1, duplicates: 0, failed: 0, parked: 0 });
    expect(deliveredIds()).toEqual([id]);
    expect(JSON.parse(sink.deliveries[0]!.body.toString('utf8'))).toEqual({ order: 8 });
  });

  it('keeps one message when the same id is enqueued twice', async () => {
    const id = randomUUID();
    await add('orders.created', { first: true }, id);
    await add('orders.created', { first: false }, id);
    await relay().runOnce();
    expect(deliveredIds()).toEqual([id]);
    expect(JSON.parse(sink.deliveries[0]!.body.toString('utf8'))).toEqual({ first: true });
  });

  it('refuses an id that is not a uuid, an empty topic and a payload that is not JSON', async () => {
    const misuse = (error: unknown) => isRetrysafeError(error, 'misuse');
    await expect(add('orders.created', {}, 'order-7')).rejects.toSatisfy(misuse);
    await expect(add('', {})).rejects.toSatisfy(misuse);
    await expect(add('orders.created', { amount: 10n })).rejects.toSatisfy(misuse);
    await expect(
      engine.database.transaction((tx) => enqueue(tx, { topic: 'orders.created', payload: undefined })),
    ).rejects.toSatisfy(misuse);
  });

  it('retries a failed publish after a backoff, under the same id, then marks it delivered', async () => {
    const id = await add();
    sink.failNext(1);
    const patient = relay({ retry: { baseDelayMs: 60_000, maxDelayMs: 60_000, random: () => 0.5 } });
    expect(await patient.runOnce()).toMatchObject({ claimed: 1, delivered: 0, failed: 1 });
    expect(await row(id)).toMatchObject({
      state: 'pending',
      attempts: 1,
      last_error: 'Error: The webhook receiver answered 500.',
      due: false,
    });
    expect((await patient.runOnce()).claimed).toBe(0);
    // Thirty seconds later, as far as the relay can tell.
    await engine.database.query(
      "UPDATE retrysafe_outbox SET next_attempt_at = now() WHERE id = $1 AND next_attempt_at > now() + interval '29 seconds'",
      [id],
    );
    expect(await patient.runOnce()).toMatchObject({ claimed: 1, delivered: 1 });
    expect(deliveredIds()).toEqual([id, id]);
    expect(await row(id)).toMatchObject({ state: 'delivered', attempts: 2 });
  });

  it('parks a message after its last attempt, lists it as a dead letter, and sends it again on request', async () => {
    const id = await add('payments.captured', { payment: 3 });
    const patient = relay({ retry: { maxAttempts: 2, baseDelayMs: 0, maxDelayMs: 0 } });
    sink.failNext(2, 503);
    expect(await patient.runOnce()).toMatchObject({ failed: 1, parked: 0 });
    expect(await patient.runOnce()).toMatchObject({ failed: 0, parked: 1 });
    expect((await patient.runOnce()).claimed).toBe(0);
    const [dead, ...others] = await deadLetters(engine.database);
    expect(others).toEqual([]);
    expect(dead).toMatchObject({
      id,
      topic: 'payments.captured',
      payload: { payment: 3 },
      attempts: 2,
      lastError: 'Error: The webhook receiver answered 503.',
    });
    expect(await outboxBacklog(engine.database)).toMatchObject({ pending: 0, dead: 1 });
    expect(await retryDeadLetter(engine.database, id)).toBe(true);
    expect(await retryDeadLetter(engine.database, id)).toBe(false);
    expect(await retryDeadLetter(engine.database, 'not-a-uuid')).toBe(false);
    expect(await patient.runOnce()).toMatchObject({ delivered: 1 });
    expect(await row(id)).toMatchObject({ state: 'delivered' });
    expect(await deadLetters(engine.database)).toEqual([]);
  });

  it('parks a message whose relay died holding it on every attempt', async () => {
    const id = await add();
    // What a relay killed during its last attempt leaves behind: all attempts claimed, the claim run out.
    await engine.database.query(
      "UPDATE retrysafe_outbox SET attempts = 3, locked_until = now() - interval '1 second', claim_token = $2 WHERE id = $1",
      [id, randomUUID()],
    );
    expect(await relay({ retry: { maxAttempts: 3 } }).runOnce()).toEqual({
      claimed: 0,
      delivered: 0,
      duplicates: 0,
      failed: 0,
      parked: 1,
    });
    expect(await row(id)).toMatchObject({
      state: 'dead',
      last_error: 'The relay stopped while publishing, on every attempt.',
    });
    expect(sink.deliveries).toEqual([]);
  });

  it('leaves a message claimed by another relay alone until the claim runs out', async () => {
    const id = await add();
    await engine.database.query(
      "UPDATE retrysafe_outbox SET attempts = 1, locked_until = now() + interval '1 hour', claim_token = $2 WHERE id = $1",
      [id, randomUUID()],
    );
    expect((await relay().runOnce()).claimed).toBe(0);
    await engine.database.query(
      "UPDATE retrysafe_outbox SET locked_until = now() - interval '1 second' WHERE id = $1",
      [id],
    );
    expect(await relay().runOnce()).toMatchObject({ claimed: 1, delivered: 1 });
    expect(await row(id)).toMatchObject({ state: 'delivered', attempts: 2 });
  });

  it('publishes only the topics it is given', async () => {
    const order = await add('orders.created');
    const payment = await add('payments.captured');
    expect(await relay({ topics: ['payments.captured'] }).runOnce()).toMatchObject({ claimed: 1, delivered: 1 });
    expect(deliveredIds()).toEqual([payment]);
    expect(await row(order)).toMatchObject({ state: 'pending', attempts: 0 });
  });

  it('prunes delivered messages older than the retention, in batches, and nothing else', async () => {
    const ids = await Promise.all(Array.from({ length: 6 }, () => add()));
    await relay().runOnce();
    const [recent, ...old] = ids;
    await engine.database.query(
      "UPDATE retrysafe_outbox SET delivered_at = now() - interval '2 hours' WHERE id = ANY ($1::uuid[])",
      [old],
    );
    const pending = await add();
    const dead = await add();
    await engine.database.query(
      "UPDATE retrysafe_outbox SET state = 'dead', parked_at = now() - interval '2 days' WHERE id = $1",
      [dead],
    );
    expect(await pruneOutbox(engine.database, { olderThanSeconds: 3600, batchSize: 2 })).toBe(5);
    const left = (await engine.database.query<{ id: string }>('SELECT id FROM retrysafe_outbox ORDER BY id')).rows.map(
      (r) => r.id,
    );
    expect(left).toEqual([recent, pending, dead].sort());
  });
});
