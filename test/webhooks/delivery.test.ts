import { randomBytes, randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { providerClient } from '../../examples/provider/client.js';
import { type Provider, startProvider } from '../../examples/provider/provider.js';
import { enqueue } from '../../src/outbox/index.js';
import type { SqlClient, SqlDatabase } from '../../src/store/sql-client.js';
import {
  type ReceivedWebhook,
  receiveWebhook,
  signWebhook,
  WebhookWorker,
  type WebhookReceipt,
} from '../../src/webhooks/index.js';
import { runProgram } from '../outbox/support/child-program.js';
import { openSharedDatabase, type SharedDatabase } from '../outbox/support/postgres.js';
import { applyPaymentEvent, PAYMENTS_TABLE } from './payments.js';
import { waitFor } from '../support/wait-for.js';

const SECRET = `whsec_${randomBytes(24).toString('base64')}`;
const RELAY = 'test/outbox/programs/relay.ts';

/** The receiver as an application wires it into Fastify: a plugin of its own that keeps the body as raw bytes. */
async function startReceiver(
  database: SqlDatabase<SqlClient>,
  receipts: WebhookReceipt[],
): Promise<{ readonly url: string; readonly app: FastifyInstance }> {
  const app = Fastify();
  await app.register((webhooks, _options, done) => {
    webhooks.addContentTypeParser('application/json', { parseAs: 'buffer' }, (_request, body, done) =>
      done(null, body),
    );
    webhooks.post<{ Body: Buffer }>('/webhooks/payments', async (request, reply) => {
      const receipt = await receiveWebhook(
        database,
        { receiver: 'payments', secrets: SECRET },
        { headers: request.headers, rawBody: request.body },
      );
      receipts.push(receipt);
      return reply.code(receipt.status).headers(receipt.headers).send(Buffer.from(receipt.body));
    });
    done();
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  return { url: `http://127.0.0.1:${(app.server.address() as AddressInfo).port}/webhooks/payments`, app };
}

describe(
  'webhooks from an outbox relay and from the payment provider, into a Fastify receiver',
  { timeout: 120_000 },
  () => {
    let shared: SharedDatabase;
    let receiver: Awaited<ReturnType<typeof startReceiver>>;
    const receipts: WebhookReceipt[] = [];
    let calls: string[];

    beforeAll(async () => {
      shared = await openSharedDatabase();
      await shared.database.query(PAYMENTS_TABLE);
      receiver = await startReceiver(shared.database, receipts);
    });
    afterAll(async () => {
      await receiver?.app.close();
      await shared?.close();
    });
    beforeEach(async () => {
      await shared.reset();
      await shared.database.query('DELETE FROM payments');
      receipts.length = 0;
      calls = [];
    });

    /** Applies payment events, keeping the highest version: events may come out of order. */
    const worker = () =>
      new WebhookWorker({
        database: shared.database,
        receiver: 'payments',
        async handler(event: ReceivedWebhook, tx: SqlClient) {
          calls.push(event.id);
          await applyPaymentEvent(event, tx);
        },
      });
    /** A delivery sent by hand, signed now with `secret`. */
    const send = async (id: string, payload: unknown, secret = SECRET) => {
      const body = JSON.stringify(payload);
      const timestamp = Math.floor(Date.now() / 1000);
      const response = await fetch(receiver.url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'webhook-id': id,
          'webhook-timestamp': String(timestamp),
          'webhook-signature': signWebhook(secret, id, timestamp, body),
        },
        body,
      });
      return {
        status: response.status,
        type: response.status >= 400 ? ((await response.json()) as { type: string }).type : undefined,
      };
    };
    const events = async () =>
      (
        await shared.database.query<{ id: string; state: string }>(
          'SELECT id, state FROM retrysafe_webhook_events ORDER BY id',
        )
      ).rows;

    it('a webhook delivered three times, after a later event, and a forged one: each real event is processed once, the forged one is refused and not stored', async () => {
      const later = randomUUID();
      expect(await send(later, { type: 'payment.refunded', charge: 'ch_1', version: 2 })).toEqual({
        status: 202,
        type: undefined,
      });

      // The earlier event leaves through the outbox; its relay is killed between publishing and marking it delivered.
      const earlier = await shared.database.transaction((tx) =>
        enqueue(tx, { topic: 'payment.succeeded', payload: { type: 'payment.succeeded', charge: 'ch_1', version: 1 } }),
      );
      const relayEnv = {
        DATABASE_URL: shared.url,
        TRANSPORT: 'webhook',
        WEBHOOK_URL: receiver.url,
        WEBHOOK_SECRET: SECRET,
      };
      await runProgram(
        RELAY,
        { ...relayEnv, RETRYSAFE_CRASH_AT: 'relay-after-publish', LEASE_SECONDS: '1' },
        'SIGKILL',
      );
      await waitFor(
        async () =>
          (await shared.database.query('SELECT 1 FROM retrysafe_outbox WHERE locked_until <= now()')).rows.length === 1,
        { what: 'the claim ran out' },
      );
      await runProgram(RELAY, relayEnv);
      expect(await send(earlier, { type: 'payment.succeeded', charge: 'ch_1', version: 1 })).toEqual({
        status: 202,
        type: undefined,
      });

      const forged = randomUUID();
      const forgery = await send(
        forged,
        { type: 'payment.refunded', charge: 'ch_2', version: 9 },
        `whsec_${randomBytes(24).toString('base64')}`,
      );
      expect(forgery).toEqual({ status: 401, type: 'https://retrysafe.dev/problems/webhook-signature-invalid' });

      expect(receipts.map((receipt) => receipt.kind)).toEqual([
        'recorded',
        'recorded',
        'duplicate',
        'duplicate',
        'rejected',
      ]);
      expect(await events()).toEqual([earlier, later].sort().map((id) => ({ id, state: 'received' })));

      expect(await worker().runOnce()).toEqual({ processed: 2, duplicates: 0, failed: 0, parked: 0 });
      expect(calls.sort()).toEqual([earlier, later].sort());
      expect((await shared.database.query('SELECT charge, status, version FROM payments')).rows).toEqual([
        { charge: 'ch_1', status: 'refunded', version: 2 },
      ]);
      expect(await events()).toEqual([earlier, later].sort().map((id) => ({ id, state: 'processed' })));
      expect(
        (await shared.database.query('SELECT 1 FROM retrysafe_webhook_events WHERE id = $1', [forged])).rows,
      ).toEqual([]);
    });

    describe('from the payment provider', () => {
      let provider: Provider;
      beforeAll(async () => {
        provider = await startProvider({ webhookUrl: receiver.url, webhookSecret: SECRET });
      });
      afterAll(() => provider?.close());

      it("records the provider's signed payment.succeeded webhook once per charge and processes it once", async () => {
        const client = providerClient(provider.url);
        const charge = {
          idempotencyKey: randomUUID(),
          amountCents: 1299,
          currency: 'EUR',
          reference: `ord-${randomUUID()}`,
        };
        const first = await client.charge(charge);
        const replay = await client.charge(charge);
        expect([first.kind, replay.kind]).toEqual(['charged', 'charged']);
        await waitFor(() => receipts.length > 0, { what: 'the provider delivered its webhook' });
        expect(receipts.map((receipt) => receipt.kind)).toEqual(['recorded']);

        const applied: unknown[] = [];
        const paymentsWorker = new WebhookWorker({
          database: shared.database,
          receiver: 'payments',
          handler: (event: ReceivedWebhook) => {
            applied.push(event.payload);
            return Promise.resolve();
          },
        });
        expect(await paymentsWorker.runOnce()).toMatchObject({ processed: 1 });
        expect(applied).toEqual([
          expect.objectContaining({
            type: 'payment.succeeded',
            data: { charge: expect.objectContaining({ reference: charge.reference, amount_cents: 1299 }) as unknown },
          }),
        ]);
        expect(await paymentsWorker.runOnce()).toMatchObject({ processed: 0 });
      });
    });
  },
);
