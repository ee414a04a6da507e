import { headers as natsHeaders } from '@nats-io/transport-node';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { consumeJetStream } from '../../src/inbox/index.js';
import { enqueue, jetStreamTransport, Relay, type RelayReport } from '../../src/outbox/index.js';
import { emailsByMessage, sendEmail } from '../inbox/programs/emails.js';
import { outcomes } from '../inbox/support/outcomes.js';
import { broker } from '../support/brokers.js';
import { type ChildProgram, runProgram, startProgram } from './support/child-program.js';
import { jetStreamRoute, type JetStreamRoute } from './support/jetstream.js';
import { openSharedDatabase, type SharedDatabase } from './support/postgres.js';
import { closedStartGate } from './support/start-gate.js';
import { waitFor } from '../support/wait-for.js';

const nats = await broker('NATS');
const RELAY = 'test/outbox/programs/relay.ts';

describe.skipIf(!nats.reachable)('the outbox over NATS JetStream', { timeout: 120_000 }, () => {
  let shared: SharedDatabase;
  let route: JetStreamRoute;
  /** A stream that forgets message ids after one second. */
  let forgetful: JetStreamRoute;

  beforeAll(async () => {
    shared = await openSharedDatabase();
    route = await jetStreamRoute(nats.url);
    forgetful = await jetStreamRoute(nats.url, { duplicateWindowMs: 1000 });
  });
  afterAll(async () => {
    await forgetful?.close();
    await route?.close();
    await shared?.close();
  });
  beforeEach(async () => {
    await shared.reset();
    await route.reset();
    await forgetful.reset();
  });

  const relayEnv = (extra: Record<string, string> = {}) => ({
    DATABASE_URL: shared.url,
    TRANSPORT: 'jetstream',
    NATS_URL: nats.url,
    ...extra,
  });
  const add = (topic: string, to: string) =>
    shared.database.transaction((tx) => enqueue(tx, { topic, payload: { to } }));
  const row = async (id: string) =>
    (
      await shared.database.query<{ state: string; attempts: number }>(
        'SELECT state, attempts FROM retrysafe_outbox WHERE id = $1',
        [id],
      )
    ).rows[0];

  /** Consumes `on`'s durable consumer through the inbox as "emails" until `count` deliveries are settled. */
  async function consumeEmails(on: JetStreamRoute, count: number) {
    const seen = outcomes();
    const consumer = await on.js.consumers.get(on.stream, on.durable);
    const subscription = await consumeJetStream(consumer, {
      database: shared.database,
      consumer: 'emails',
      handler: sendEmail('emails'),
      onSettled: seen.onSettled,
    });
    try {
      await seen.reach(count);
    } finally {
      await subscription.close();
    }
    return seen;
  }

  /** Kills a relay after its publish, waits for its claim (of `leaseSeconds`) to run out, and lets a second relay publish again. */
  async function crashAndRepublish(id: string, leaseSeconds: number): Promise<RelayReport[]> {
    await runProgram(
      RELAY,
      relayEnv({ RETRYSAFE_CRASH_AT: 'relay-after-publish', LEASE_SECONDS: String(leaseSeconds) }),
      'SIGKILL',
    );
    expect(await row(id)).toMatchObject({ state: 'pending', attempts: 1 });
    await waitFor(
      async () =>
        (await shared.database.query('SELECT 1 FROM retrysafe_outbox WHERE locked_until <= now()')).rows.length === 1,
      { what: 'the claim ran out' },
    );
    const second = await runProgram(RELAY, relayEnv());
    expect(await row(id)).toMatchObject({ state: 'delivered', attempts: 2 });
    return second.records() as RelayReport[];
  }

  it('publishes with the outbox id as Nats-Msg-Id, waiting for the stream to store it', async () => {
    const id = await shared.database.transaction((tx) =>
      enqueue(tx, {
        topic: `${route.subject}.orders.created`,
        headers: { 'x-tenant': 'tenant-a' },
        payload: { order: 42 },
      }),
    );
    const relay = new Relay({
      database: shared.database,
      transport: jetStreamTransport(route.js, { headers: natsHeaders }),
    });
    expect(await relay.runOnce()).toMatchObject({ claimed: 1, delivered: 1, duplicates: 0 });
    const consumer = await route.js.consumers.get(route.stream, route.durable);
    const message = await consumer.next({ expires: 5000 });
    if (message === null) throw new Error('The stream gave no message.');
    message.ack();
    expect(message.subject).toBe(`${route.subject}.orders.created`);
    expect(message.headers?.get('Nats-Msg-Id')).toBe(id);
    expect(message.headers?.get('x-tenant')).toBe('tenant-a');
    expect(message.json()).toEqual({ order: 42 });
  });

  it('relay killed after publishing, inside the duplicate window: the stream drops the second publish, and one email is sent', async () => {
    const id = await add(`${route.subject}.emails.welcome`, 'ada@example.test');
    const reports = await crashAndRepublish(id, 1);
    expect(reports[0]).toMatchObject({ delivered: 1, duplicates: 1 });
    expect(await route.stored()).toBe(1);
    expect((await consumeEmails(route, 1)).all).toEqual([{ kind: 'processed', id }]);
    expect(await emailsByMessage(shared.database)).toEqual({ [id]: 1 });
  });

  it('relay killed after publishing, past the duplicate window: the stream keeps both copies, and one email is sent', async () => {
    const id = await add(`${forgetful.subject}.emails.welcome`, 'grace@example.test');
    // The server forgets ids some time after the window (its purge runs once per window): wait out three.
    const reports = await crashAndRepublish(id, 3);
    expect(reports[0]).toMatchObject({ delivered: 1, duplicates: 0 });
    expect(await forgetful.stored()).toBe(2);
    expect((await consumeEmails(forgetful, 2)).all).toEqual([
      { kind: 'processed', id },
      { kind: 'duplicate', id },
    ]);
    expect(await emailsByMessage(shared.database)).toEqual({ [id]: 1 });
  });

  it('two relays racing on one outbox: every message is published, and each sends one email', async () => {
    const ids = await Promise.all(
      Array.from({ length: 40 }, (_, i) => add(`${route.subject}.emails.receipt`, `customer-${i}@example.test`)),
    );
    const gate = await closedStartGate(shared.url);
    const relays = [1, 2].map(() => startProgram(RELAY, relayEnv({ BATCH_SIZE: '4', START_GATE: gate.key })));
    await gate.open(relays.length);
    for (const relay of relays) expect(await relay.exited, relay.output()).toBe(0);

    const { rows } = await shared.database.query<{ state: string; n: number }>(
      'SELECT state, count(*)::int AS n FROM retrysafe_outbox GROUP BY state',
    );
    expect(rows).toEqual([{ state: 'delivered', n: 40 }]);
    expect(stored(relays)).toBe(40);
    expect(await route.stored()).toBe(40);
    await consumeEmails(route, 40);
    expect(await emailsByMessage(shared.database)).toEqual(Object.fromEntries(ids.map((id) => [id, 1])));
  });
});

/** Messages the relays published that the stream stored (not dropped as copies), by their own reports. */
function stored(relays: readonly ChildProgram[]): number {
  return relays
    .flatMap((relay) => relay.records() as RelayReport[])
    .reduce((sum, report) => sum + report.delivered - report.duplicates, 0);
}
