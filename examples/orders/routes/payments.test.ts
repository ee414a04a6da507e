import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Engine, engines } from '../../../test/support/engines.js';
import { downstreamKey } from 'retrysafe';
import { providerAdmin, providerClient } from '../../provider/client.js';
import { type Provider, startProvider } from '../../provider/provider.js';
import { call, json } from '../testing/http.js';
import { A, B, type RunningService, startService } from '../testing/service.js';

const PROBLEMS = 'https://retrysafe.dev/examples/orders/problems/';

describe.each(engines)('payments on $name', (factory) => {
  let engine: Engine;
  let provider: Provider;
  let admin: ReturnType<typeof providerAdmin>;
  let service: RunningService;
  beforeAll(async () => {
    engine = await factory.open();
    provider = await startProvider();
    admin = providerAdmin(provider.url);
    service = await startService(engine.database, { provider: providerClient(provider.url) });
  });
  afterAll(async () => {
    await service?.close();
    await provider?.close();
    await engine?.close();
  });

  async function placeOrder(cartId: string, token: string = A.token): Promise<{ id: string; total: number }> {
    const cart = await call(service.url, 'PUT', `/v1/carts/${cartId}`, {
      token,
      json: { items: [{ sku: 'WIDGET-1', qty: 2 }] },
    });
    const version = json(cart).cart_version as number;
    const placed = await call(service.url, 'POST', '/v1/orders', {
      token,
      key: `order-${cartId}`,
      json: { cart_id: cartId, cart_version: version, delivery_option: 'standard' },
    });
    expect(placed.status).toBe(201);
    return { id: json(placed).id as string, total: json(placed).total_cents as number };
  }
  const pay = (orderId: string, key: string, token: string = A.token, body?: unknown) =>
    call(service.url, 'POST', `/v1/orders/${orderId}/payments`, {
      token,
      key,
      ...(body === undefined ? {} : { json: body }),
    });
  const charges = (tenant: string, key: string) =>
    admin.count(downstreamKey({ tenant, operation: 'payments.create@1', key }, 'charge'));
  const paymentRows = async (orderId: string) =>
    (
      await engine.database.query<{ status: string; amount_cents: number }>(
        'SELECT status, amount_cents FROM payments WHERE order_id = $1',
        [orderId],
      )
    ).rows;

  it('charges the order total once and replays the payment on retry', async () => {
    const order = await placeOrder('p-happy');
    const first = await pay(order.id, 'pay-happy');
    expect(first.status).toBe(201);
    expect(json(first)).toMatchObject({
      order_id: order.id,
      amount_cents: order.total,
      status: 'succeeded',
      currency: 'EUR',
    });
    const again = await pay(order.id, 'pay-happy');
    expect(again.status).toBe(201);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.body.equals(first.body)).toBe(true);
    expect(await charges(A.tenant, 'pay-happy')).toBe(1);
    expect(await paymentRows(order.id)).toEqual([{ status: 'succeeded', amount_cents: order.total }]);
    const location = first.headers.location ?? '';
    const read = await call(service.url, 'GET', location, { token: A.token });
    expect(json(read)).toMatchObject({ id: json(first).id, status: 'succeeded' });
  });

  it('refuses a second key for a paid order with a stored 409 that points at the payment, without charging', async () => {
    const order = await placeOrder('p-twice');
    const first = await pay(order.id, 'pay-twice-1');
    const second = await pay(order.id, 'pay-twice-2');
    expect(second.status).toBe(409);
    expect(json(second).type).toBe(`${PROBLEMS}payment-exists`);
    expect(second.headers.location).toBe(first.headers.location);
    const secondAgain = await pay(order.id, 'pay-twice-2');
    expect(secondAgain.headers['idempotent-replayed']).toBe('true');
    expect(await charges(A.tenant, 'pay-twice-2')).toBe(0);
    expect(await paymentRows(order.id)).toHaveLength(1);
  });

  it('recovers from a provider that charged and dropped the connection', async () => {
    const order = await placeOrder('p-drop');
    await admin.control({ mode: 'charge-then-drop', reference: order.id });
    const answer = await pay(order.id, 'pay-drop');
    expect(answer.status).toBe(201);
    expect(await charges(A.tenant, 'pay-drop')).toBe(1);
    expect(await paymentRows(order.id)).toEqual([{ status: 'succeeded', amount_cents: order.total }]);
  });

  it('answers 404 for another tenant’s order and a body that tries to set the amount with 422, charging nothing', async () => {
    const order = await placeOrder('p-tenant');
    const foreign = await pay(order.id, 'pay-foreign', B.token);
    expect(foreign.status).toBe(404);
    expect(await charges(B.tenant, 'pay-foreign')).toBe(0);
    const withBody = await pay(order.id, 'pay-body', A.token, { amount_cents: 1 });
    expect(withBody.status).toBe(422);
    expect(await charges(A.tenant, 'pay-body')).toBe(0);
  });

  it('answers a reused key on another order with 422 fingerprint-mismatch', async () => {
    const first = await placeOrder('p-reuse-1');
    const second = await placeOrder('p-reuse-2');
    expect((await pay(first.id, 'pay-reuse')).status).toBe(201);
    const reused = await pay(second.id, 'pay-reuse');
    expect(reused.status).toBe(422);
    expect(json(reused).type).toBe('https://retrysafe.dev/problems/fingerprint-mismatch');
    expect(await paymentRows(second.id)).toHaveLength(0);
  });
});
