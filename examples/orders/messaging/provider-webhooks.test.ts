import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signWebhook } from 'retrysafe/webhooks';
import { type Engine, engines } from '../../../test/support/engines.js';
import { type OpenProvider, openProvider } from '../infrastructure/open-provider.js';
import { PROVIDER_RECEIVER, providerEventWorker } from './provider-events.js';
import { placeOrder } from '../testing/checkout.js';
import { call, json } from '../testing/http.js';
import { inboxCount, paidAt, webhookEventRows } from '../testing/messaging-rows.js';
import { A, type RunningService, startService } from '../testing/service.js';
import { startWebhookTap, type TappedDelivery, type WebhookTap } from '../testing/webhook-tap.js';
import { waitFor } from '../../../test/support/wait-for.js';

const SECRET = `whsec_${randomBytes(24).toString('base64')}`;
const SIGNATURE_INVALID = 'https://retrysafe.dev/problems/webhook-signature-invalid';

describe.each(engines)('the provider’s payment webhooks, on $name', (factory) => {
  let engine: Engine;
  let stateDir: string;
  let provider: OpenProvider;
  let service: RunningService;
  let tap: WebhookTap;
  beforeAll(async () => {
    engine = await factory.open();
    stateDir = await mkdtemp(join(tmpdir(), 'orders-provider-'));
    // As main.ts does: the local provider starts once the service's webhook URL is known; here a tap sits in between.
    provider = openProvider({ kind: 'local', stateFile: join(stateDir, 'provider.json') }, SECRET);
    service = await startService(engine.database, { provider: provider.client, webhookSecrets: [SECRET] });
    tap = await startWebhookTap(`${service.url}/webhooks/provider`);
    await provider.start(tap.url);
  });
  afterAll(async () => {
    await service?.close();
    await provider?.close();
    await tap?.close();
    await engine?.close();
    await rm(stateDir, { recursive: true, force: true });
  });

  /** Pays the order through the service and waits for the provider's webhook to be answered. */
  async function pay(orderId: string, key: string): Promise<TappedDelivery> {
    const seen = tap.deliveries.length;
    const payment = await call(service.url, 'POST', `/v1/orders/${orderId}/payments`, { token: A.token, key });
    expect(payment.status).toBe(201);
    await waitFor(() => tap.deliveries.length > seen, { what: 'the provider delivered its webhook' });
    const delivery = tap.deliveries[seen];
    if (delivery === undefined) throw new Error('no delivery');
    expect(JSON.parse(delivery.body.toString('utf8'))).toMatchObject({
      type: 'payment.succeeded',
      data: { charge: { reference: orderId } },
    });
    return delivery;
  }
  const readPaidAt = async (orderId: string) =>
    json(await call(service.url, 'GET', `/v1/orders/${orderId}`, { token: A.token })).paid_at;

  it('marks the order paid once, though the same signed webhook is delivered three times', async () => {
    const order = await placeOrder(service.url, A, 'w-paid');
    const delivery = await pay(order.id, 'pay-w-paid');
    const id = delivery.headers['webhook-id'] ?? '';
    expect(delivery.status).toBe(202);
    // Recorded before the 202, processed later: not paid yet.
    expect(await webhookEventRows(engine.database, [id])).toEqual([{ id, state: 'received' }]);
    expect(await readPaidAt(order.id)).toBeNull();

    expect(await tap.post(delivery.headers, delivery.body)).toEqual({ status: 202, type: undefined });
    const worker = providerEventWorker(engine.database);
    expect(await worker.runOnce()).toEqual({ processed: 1, duplicates: 0, failed: 0, parked: 0 });
    const paid = await paidAt(engine.database, order.id);
    expect(paid).toBeInstanceOf(Date);
    expect(await readPaidAt(order.id)).toBe(paid?.toISOString());

    // The third delivery comes after the processing: accepted, and nothing changes.
    expect(await tap.post(delivery.headers, delivery.body)).toEqual({ status: 202, type: undefined });
    expect(await worker.runOnce()).toEqual({ processed: 0, duplicates: 0, failed: 0, parked: 0 });
    expect(await paidAt(engine.database, order.id)).toEqual(paid);
    expect(await webhookEventRows(engine.database, [id])).toEqual([{ id, state: 'processed' }]);
    expect(await inboxCount(engine.database, PROVIDER_RECEIVER, id)).toBe(1);
  });

  it('refuses a forged webhook, or a signed one with its body changed, with 401 and stores nothing', async () => {
    const paidOrder = await placeOrder(service.url, A, 'w-genuine');
    const unpaid = await placeOrder(service.url, A, 'w-unpaid');
    const genuine = await pay(paidOrder.id, 'pay-w-genuine');
    const forgedBody = JSON.stringify({
      type: 'payment.succeeded',
      id: 'evt_forged',
      data: { charge: { reference: unpaid.id, amount_cents: unpaid.totalCents } },
    });
    const timestamp = Math.floor(Date.now() / 1000);
    const otherSecret = `whsec_${randomBytes(24).toString('base64')}`;
    const forged = {
      'content-type': 'application/json',
      'webhook-id': 'evt_forged',
      'webhook-timestamp': String(timestamp),
      'webhook-signature': signWebhook(otherSecret, 'evt_forged', timestamp, forgedBody),
    };
    expect(await tap.post(forged, forgedBody)).toEqual({ status: 401, type: SIGNATURE_INVALID });
    const changed = genuine.body.toString('utf8').replaceAll(paidOrder.id, unpaid.id);
    expect(await tap.post(genuine.headers, changed)).toEqual({ status: 401, type: SIGNATURE_INVALID });

    expect(await webhookEventRows(engine.database, ['evt_forged'])).toEqual([]);
    await providerEventWorker(engine.database).runOnce();
    expect(await paidAt(engine.database, unpaid.id)).toBeNull();
    expect(await paidAt(engine.database, paidOrder.id)).toBeInstanceOf(Date);
  });
});
