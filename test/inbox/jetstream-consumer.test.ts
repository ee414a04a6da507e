import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { consumeJetStream, type InboxMessage } from '../../src/inbox/index.js';
import type { SqlClient } from '../../src/store/sql-client.js';
import { runProgram, startProgram } from '../outbox/support/child-program.js';
import { jetStreamRoute, type JetStreamRoute } from '../outbox/support/jetstream.js';
import { openSharedDatabase, type SharedDatabase } from '../outbox/support/postgres.js';
import { broker } from '../support/brokers.js';
import { emailsByMessage, failingFirstDelivery, sendEmail } from './programs/emails.js';
import { outcomes } from './support/outcomes.js';
import { waitFor } from '../support/wait-for.js';

const nats = await broker('NATS');
const CONSUMER = 'test/inbox/programs/consumer.ts';

describe.skipIf(!nats.reachable)('an inbox consumer on NATS JetStream', { timeout: 120_000 }, () => {
  let shared: SharedDatabase;
  let route: JetStreamRoute;

  beforeAll(async () => {
    shared = await openSharedDatabase();
    route = await jetStreamRoute(nats.url);
  });
  afterAll(async () => {
    await route?.close();
    await shared?.close();
  });
  beforeEach(async () => {
    await shared.reset();
    await route.reset();
  });

  const publish = async (content: string, msgID?: string) => {
    await route.js.publish(`${route.subject}.emails.welcome`, content, msgID === undefined ? {} : { msgID });
  };
  const consumerEnv = (extra: Record<string, string> = {}) => ({
    DATABASE_URL: shared.url,
    BROKER: 'jetstream',
    NATS_URL: nats.url,
    STREAM: route.stream,
    DURABLE: route.durable,
    ...extra,
  });
  /** Messages the durable consumer has not had acked: waiting, or handed out and not yet acked. */
  const unsettled = async () => {
    const info = await route.jsm.consumers.info(route.stream, route.durable);
    return info.num_pending + info.num_ack_pending;
  };

  async function consumeUntil(
    count: number,
    handler: (message: InboxMessage, tx: SqlClient) => Promise<void> = sendEmail('emails'),
  ) {
    const seen = outcomes();
    const consumer = await route.js.consumers.get(route.stream, route.durable);
    const subscription = await consumeJetStream(consumer, {
      database: shared.database,
      consumer: 'emails',
      handler,
      redeliveryDelayMs: 50,
      onSettled: seen.onSettled,
    });
    try {
      await seen.reach(count);
    } finally {
      await subscription.close();
    }
    return seen;
  }

  it('acks a message once its email is committed', async () => {
    const id = randomUUID();
    await publish(JSON.stringify({ to: 'ada@example.test' }), id);
    expect((await consumeUntil(1)).all).toEqual([{ kind: 'processed', id }]);
    expect(await emailsByMessage(shared.database)).toEqual({ [id]: 1 });
    await waitFor(async () => (await unsettled()) === 0, { what: 'the ack reached the server' });
  });

  it('consumer killed after commit, before the ack: the message comes back after ack_wait and its email is not sent again', async () => {
    const id = randomUUID();
    await publish(JSON.stringify({ to: 'ada@example.test' }), id);
    await runProgram(CONSUMER, consumerEnv({ RETRYSAFE_CRASH_AT: 'consumer-after-commit' }), 'SIGKILL');
    expect(await emailsByMessage(shared.database)).toEqual({ [id]: 1 });
    expect(await unsettled()).toBe(1);

    const redelivery = startProgram(CONSUMER, consumerEnv());
    try {
      await waitFor(() => redelivery.records().some((record) => (record as { kind?: string }).kind !== undefined), {
        what: 'the redelivery was settled',
      });
      expect(redelivery.records()).toContainEqual({ kind: 'duplicate', id });
      await waitFor(async () => (await unsettled()) === 0, { what: 'the ack reached the server' });
    } finally {
      await redelivery.kill('SIGKILL');
    }
    expect(await emailsByMessage(shared.database)).toEqual({ [id]: 1 });
  });

  it('naks a message when the handler fails, and processes it on redelivery', async () => {
    const id = randomUUID();
    await publish(JSON.stringify({ to: 'ada@example.test' }), id);
    const flaky = failingFirstDelivery('emails');
    const seen = await consumeUntil(2, flaky.handler);
    expect(seen.kinds()).toEqual(['failed', 'processed']);
    expect(flaky.redelivered).toEqual([false, true]);
    expect(await emailsByMessage(shared.database)).toEqual({ [id]: 1 });
  });

  it('terminates, without running the handler, a message with no Nats-Msg-Id or a body that is not JSON', async () => {
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
    await waitFor(async () => (await unsettled()) === 0, { what: 'the server took the terminations' });
  });
});
