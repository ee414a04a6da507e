import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { consumeAmqp } from '../../src/inbox/index.js';
import { amqpTransport, enqueue, Relay, type RelayReport } from '../../src/outbox/index.js';
import { emailsByMessage, sendEmail } from '../inbox/programs/emails.js';
import { outcomes } from '../inbox/support/outcomes.js';
import { broker } from '../support/brokers.js';
import { type ChildProgram, runProgram, startProgram } from './support/child-program.js';
import { openSharedDatabase, type SharedDatabase } from './support/postgres.js';
import { closedStartGate } from './support/start-gate.js';
import { rabbitRoute, type RabbitRoute } from './support/rabbit.js';
import { waitFor } from '../support/wait-for.js';

const rabbit = await broker('RabbitMQ');
const RELAY = 'test/outbox/programs/relay.ts';

describe.skipIf(!rabbit.reachable)('the outbox over RabbitMQ', { timeout: 120_000 }, () => {
  let shared: SharedDatabase;
  let route: RabbitRoute;

  beforeAll(async () => {
    shared = await openSharedDatabase();
    route = await rabbitRoute(rabbit.url);
  });
  afterAll(async () => {
    await route?.close();
    await shared?.close();
  });
  beforeEach(async () => {
    await shared.reset();
    await route.reset();
  });

  const relayEnv = (extra: Record<string, string> = {}) => ({
    DATABASE_URL: shared.url,
    TRANSPORT: 'amqp',
    AMQP_URL: rabbit.url,
    EXCHANGE: route.exchange,
    ...extra,
  });
  const add = (topic: string, to: string) =>
    shared.database.transaction((tx) => enqueue(tx, { topic, payload: { to } }));
  const row = async (id: string) =>
    (
      await shared.database.query<{ state: string; attempts: number; last_error: string | null }>(
        'SELECT state, attempts, last_error FROM retrysafe_outbox WHERE id = $1',
        [id],
      )
    ).rows[0];

  /**
   * Consumes the queue through the inbox as "emails" until `count` deliveries
   * are settled. `oneAtATime`: on a channel of its own that holds one
   * message until it is acked, so deliveries settle in the queue's order;
   * otherwise the consumer handles them together, and a duplicate can
   * settle before the copy it waited for.
   */
  async function consumeEmails(count: number, { oneAtATime = false } = {}) {
    const seen = outcomes();
    const channel = oneAtATime ? await route.connection.createChannel() : route.channel;
    if (oneAtATime) await channel.prefetch(1);
    const subscription = await consumeAmqp(channel, {
      database: shared.database,
      consumer: 'emails',
      handler: sendEmail('emails'),
      queue: route.queue,
      onSettled: seen.onSettled,
    });
    try {
      await seen.reach(count);
    } finally {
      await subscription.close();
      if (oneAtATime) await channel.close();
    }
    return seen;
  }

  it('publishes through publisher confirms: persistent, the outbox id as messageId, the topic as routing key', async () => {
    const id = await shared.database.transaction((tx) =>
      enqueue(tx, { topic: 'orders.created', headers: { 'x-tenant': 'tenant-a' }, payload: { order: 42 } }),
    );
    const relay = new Relay({
      database: shared.database,
      transport: amqpTransport(route.confirmChannel, { exchange: route.exchange }),
    });
    expect(await relay.runOnce()).toMatchObject({ claimed: 1, delivered: 1, failed: 0 });
    const message = await route.channel.get(route.queue, { noAck: true });
    if (message === false) throw new Error('The queue is empty.');
    expect(message.properties).toMatchObject({
      messageId: id,
      deliveryMode: 2,
      contentType: 'application/json',
      headers: { 'x-tenant': 'tenant-a' },
    });
    expect(message.fields).toMatchObject({ exchange: route.exchange, routingKey: 'orders.created' });
    expect(JSON.parse(message.content.toString('utf8'))).toEqual({ order: 42 });
    expect(await row(id)).toMatchObject({ state: 'delivered', attempts: 1 });
  });

  it('counts a message that no queue receives as a failed publish, not as delivered', async () => {
    const id = await add('invoices.created', 'nobody@example.test');
    const relay = new Relay({
      database: shared.database,
      transport: amqpTransport(route.confirmChannel, { exchange: route.exchange }),
    });
    expect(await relay.runOnce()).toMatchObject({ claimed: 1, delivered: 0, failed: 1 });
    expect(await row(id)).toMatchObject({
      state: 'pending',
      attempts: 1,
      last_error: expect.stringContaining('No queue is bound to routing key "invoices.created"') as unknown,
    });
  });

  it("puts one 'return' listener on a channel however many transports publish through it", async () => {
    const channel = await route.connection.createConfirmChannel();
    try {
      const transports = Array.from({ length: 12 }, () => amqpTransport(channel, { exchange: route.exchange }));
      expect(channel.listenerCount('return')).toBe(1);
      // Each transport still tells a returned message from a delivered one.
      const id = await add('invoices.created', 'nobody@example.test');
      const relay = new Relay({ database: shared.database, transport: transports.at(-1)! });
      expect(await relay.runOnce()).toMatchObject({ claimed: 1, delivered: 0, failed: 1 });
      expect(await row(id)).toMatchObject({
        last_error: expect.stringContaining('No queue is bound to routing key "invoices.created"') as unknown,
      });
    } finally {
      await channel.close();
    }
  });

  it('relay killed after publishing, before marking delivered: the message goes out twice under one id, and one email is sent', async () => {
    const id = await add('emails.welcome', 'ada@example.test');
    await runProgram(RELAY, relayEnv({ RETRYSAFE_CRASH_AT: 'relay-after-publish', LEASE_SECONDS: '1' }), 'SIGKILL');
    expect(await row(id)).toMatchObject({ state: 'pending', attempts: 1 });
    expect(await route.waiting()).toBe(1);

    // Once the dead relay's claim runs out, the next relay publishes the message again.
    await waitFor(
      async () =>
        (await shared.database.query('SELECT 1 FROM retrysafe_outbox WHERE locked_until <= now()')).rows.length === 1,
      { what: 'the claim ran out' },
    );
    await runProgram(RELAY, relayEnv());
    expect(await row(id)).toMatchObject({ state: 'delivered', attempts: 2 });
    expect(await route.waiting()).toBe(2);

    const seen = await consumeEmails(2, { oneAtATime: true });
    expect(seen.all).toEqual([
      { kind: 'processed', id },
      { kind: 'duplicate', id },
    ]);
    expect(await emailsByMessage(shared.database)).toEqual({ [id]: 1 });
    expect(await route.waiting()).toBe(0);
  });

  it('two relays racing on one outbox: every message is published, and each sends one email', async () => {
    const ids = await Promise.all(
      Array.from({ length: 40 }, (_, i) => add('emails.receipt', `customer-${i}@example.test`)),
    );
    const gate = await closedStartGate(shared.url);
    const relays = [1, 2].map(() => startProgram(RELAY, relayEnv({ BATCH_SIZE: '4', START_GATE: gate.key })));
    await gate.open(relays.length);
    for (const relay of relays) expect(await relay.exited, relay.output()).toBe(0);

    const { rows } = await shared.database.query<{ state: string; n: number }>(
      'SELECT state, count(*)::int AS n FROM retrysafe_outbox GROUP BY state',
    );
    expect(rows).toEqual([{ state: 'delivered', n: 40 }]);
    const published = await route.waiting();
    expect(published).toBe(delivered(relays));
    await consumeEmails(published);
    expect(await emailsByMessage(shared.database)).toEqual(Object.fromEntries(ids.map((id) => [id, 1])));
  });
});

/** Messages the relays published, by their own reports. */
function delivered(relays: readonly ChildProgram[]): number {
  return relays.flatMap((relay) => relay.records() as RelayReport[]).reduce((sum, report) => sum + report.delivered, 0);
}
