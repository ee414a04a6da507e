import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { consumeAmqp, type InboxMessage } from '../../src/inbox/index.js';
import type { SqlClient } from '../../src/store/sql-client.js';
import { runProgram, startProgram } from '../outbox/support/child-program.js';
import { openSharedDatabase, type SharedDatabase } from '../outbox/support/postgres.js';
import { rabbitRoute, type RabbitRoute } from '../outbox/support/rabbit.js';
import { broker } from '../support/brokers.js';
import { emailsByMessage, failingFirstDelivery, sendEmail } from './programs/emails.js';
import { outcomes } from './support/outcomes.js';
import { waitFor } from '../support/wait-for.js';

const rabbit = await broker('RabbitMQ');
const CONSUMER = 'test/inbox/programs/consumer.ts';

describe.skipIf(!rabbit.reachable)('an inbox consumer on RabbitMQ', { timeout: 120_000 }, () => {
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

  async function publish(content: string, messageId?: string): Promise<void> {
    route.confirmChannel.publish(route.exchange, 'emails.welcome', Buffer.from(content), {
      messageId,
      persistent: true,
    });
    await route.confirmChannel.waitForConfirms();
  }

  /**
   * Consumes on a channel of its own until `count` deliveries are settled,
   * then closes the channel: anything left unacked would go back to the queue.
   */
  async function consumeUntil(
    count: number,
    handler: (message: InboxMessage, tx: SqlClient) => Promise<void> = sendEmail('emails'),
  ) {
    const seen = outcomes();
    const channel = await route.connection.createChannel();
    const subscription = await consumeAmqp(channel, {
      database: shared.database,
      consumer: 'emails',
      handler,
      queue: route.queue,
      requeueDelayMs: 50,
      onSettled: seen.onSettled,
    });
    try {
      await seen.reach(count);
    } finally {
      await subscription.close();
      await channel.close();
    }
    return seen;
  }

  it('acks a message once its email is committed', async () => {
    const id = randomUUID();
    await publish(JSON.stringify({ to: 'ada@example.test' }), id);
    expect((await consumeUntil(1)).all).toEqual([{ kind: 'processed', id }]);
    expect(await emailsByMessage(shared.database)).toEqual({ [id]: 1 });
    expect(await route.waiting()).toBe(0);
  });

  it('consumer killed after commit, before the ack: the message comes back and its email is not sent again', async () => {
    const id = randomUUID();
    await publish(JSON.stringify({ to: 'ada@example.test' }), id);
    await runProgram(
      CONSUMER,
      {
        DATABASE_URL: shared.url,
        BROKER: 'amqp',
        AMQP_URL: rabbit.url,
        QUEUE: route.queue,
        RETRYSAFE_CRASH_AT: 'consumer-after-commit',
      },
      'SIGKILL',
    );
    expect(await emailsByMessage(shared.database)).toEqual({ [id]: 1 });
    // The broker puts the unacked message back once it notices the connection is gone.
    await waitFor(async () => (await route.waiting()) === 1, { what: 'the message is back in the queue' });

    const redelivery = startProgram(CONSUMER, {
      DATABASE_URL: shared.url,
      BROKER: 'amqp',
      AMQP_URL: rabbit.url,
      QUEUE: route.queue,
    });
    try {
      await waitFor(() => redelivery.records().some((record) => (record as { kind?: string }).kind !== undefined), {
        what: 'the redelivery was settled',
      });
      expect(redelivery.records()).toContainEqual({ kind: 'duplicate', id });
    } finally {
      await redelivery.kill('SIGKILL');
    }
    expect(await emailsByMessage(shared.database)).toEqual({ [id]: 1 });
    expect(await route.waiting()).toBe(0);
  });

  it('hands a message back when the handler fails, and processes it on redelivery', async () => {
    const id = randomUUID();
    await publish(JSON.stringify({ to: 'ada@example.test' }), id);
    const flaky = failingFirstDelivery('emails');
    const seen = await consumeUntil(2, flaky.handler);
    expect(seen.kinds()).toEqual(['failed', 'processed']);
    expect(flaky.redelivered).toEqual([false, true]);
    expect(await emailsByMessage(shared.database)).toEqual({ [id]: 1 });
  });

  it('rejects, without running the handler, a message with no messageId or a body that is not JSON', async () => {
    const calls: string[] = [];
    await publish(JSON.stringify({ to: 'ada@example.test' }));
    await publish('not json', randomUUID());
    const seen = await consumeUntil(2, (message) => {
      calls.push(message.id);
      return Promise.resolve();
    });
    expect(seen.all).toEqual([
      { kind: 'rejected', reason: 'missing-id' },
      { kind: 'rejected', reason: 'payload-invalid' },
    ]);
    expect(calls).toEqual([]);
    // Rejected without requeue: RabbitMQ moves them to the queue's dead-letter exchange.
    await waitFor(async () => (await route.waiting(route.deadLetterQueue)) === 2, { what: 'both are dead-lettered' });
    expect(await route.waiting()).toBe(0);
  });
});
