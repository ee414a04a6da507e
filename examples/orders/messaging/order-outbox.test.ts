import { describe, expect, it } from 'vitest';
import { type OutboxMessage, Relay } from 'retrysafe/outbox';
import { engines } from '../../../test/support/engines.js';
import { localTransport } from './local-transport.js';
import { CONFIRMATION_CONSUMER, confirmOrders } from './order-confirmation.js';
import { ORDER_CREATED, orderCreatedMessage } from './order-created.js';
import { placeOrder } from '../testing/checkout.js';
import { call, json } from '../testing/http.js';
import { emailRows, inboxCount, outboxCount, outboxRows } from '../testing/messaging-rows.js';
import { A, B, useService } from '../testing/service.js';

describe.each(engines)('order.created through the outbox, on $name', (factory) => {
  const t = useService(factory);

  const relay = (consumer = confirmOrders(t.engine.database)) =>
    new Relay({
      database: t.engine.database,
      transport: localTransport(consumer),
      topics: [ORDER_CREATED],
      retry: { baseDelayMs: 0, maxDelayMs: 0 },
    });

  it('commits one message with the order, under an id derived from it, and none for a replay', async () => {
    const order = await placeOrder(t.service.url, A, 'm-one', 'k-m-one');
    const payload = { order_id: order.id, tenant: A.tenant, total_cents: order.totalCents };
    const { id } = orderCreatedMessage(payload);
    expect(await outboxRows(t.engine.database, order.id)).toEqual([
      { id, topic: 'order.created', state: 'pending', payload },
    ]);

    const before = await outboxCount(t.engine.database);
    const cart = json(await call(t.service.url, 'GET', '/v1/carts/m-one', { token: A.token }));
    const replay = await call(t.service.url, 'POST', '/v1/orders', {
      token: A.token,
      key: 'k-m-one',
      json: { cart_id: 'm-one', cart_version: cart.cart_version, delivery_option: 'standard' },
    });
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(await outboxCount(t.engine.database)).toBe(before);
  });

  it('enqueues nothing when the order is refused or rolled back', async () => {
    const order = await placeOrder(t.service.url, B, 'm-refused', 'k-m-refused-1');
    const before = await outboxCount(t.engine.database);
    const refusals = [
      // Another key for a cart version already ordered: 409, rolled back.
      [{ cart_id: 'm-refused', cart_version: 1, delivery_option: 'standard' }, 409],
      // A stale cart version and an unknown cart: stored 422 outcomes, without an order.
      [{ cart_id: 'm-refused', cart_version: 7, delivery_option: 'standard' }, 422],
      [{ cart_id: 'm-nothing', cart_version: 1, delivery_option: 'standard' }, 422],
    ] as const;
    for (const [index, [body, status]] of refusals.entries()) {
      const answer = await call(t.service.url, 'POST', '/v1/orders', {
        token: B.token,
        key: `k-m-refused-${index + 2}`,
        json: body,
      });
      expect(answer.status).toBe(status);
    }
    expect(await outboxCount(t.engine.database)).toBe(before);
    expect(await outboxRows(t.engine.database, order.id)).toHaveLength(1);
  });

  it('the in-process relay sends one confirmation per order, and a redelivery of the message sends no second one', async () => {
    const order = await placeOrder(t.service.url, A, 'm-relay');
    const report = await relay().runOnce();
    expect(report).toMatchObject({ failed: 0, parked: 0 });
    expect(report.delivered).toBeGreaterThanOrEqual(1);
    const [row] = await outboxRows(t.engine.database, order.id);
    expect(row?.state).toBe('delivered');
    expect(await emailRows(t.engine.database, order.id)).toEqual([{ tenant: A.tenant, kind: 'order-confirmation' }]);

    // The same message again, as after a relay that stopped between publishing and marking it delivered.
    const message: OutboxMessage = { id: row?.id ?? '', topic: ORDER_CREATED, headers: {}, payload: row?.payload };
    expect(await confirmOrders(t.engine.database)(message)).toEqual({ kind: 'duplicate' });
    expect(await localTransport(confirmOrders(t.engine.database)).publish(message)).toBe('duplicate');
    expect(await relay().runOnce()).toMatchObject({ claimed: 0 });
    expect(await emailRows(t.engine.database, order.id)).toHaveLength(1);
    expect(await inboxCount(t.engine.database, CONFIRMATION_CONSUMER, message.id)).toBe(1);
  });

  it('keeps a message whose consumer failed, sends nothing, and delivers it on the next pass', async () => {
    const order = await placeOrder(t.service.url, B, 'm-retry');
    const failing = () => Promise.reject(new Error('the mail server is down'));
    const failed = await relay(failing).runOnce();
    expect(failed).toMatchObject({ delivered: 0, parked: 0 });
    expect(failed.failed).toBeGreaterThanOrEqual(1);
    expect(await outboxRows(t.engine.database, order.id)).toMatchObject([{ state: 'pending' }]);
    expect(await emailRows(t.engine.database, order.id)).toEqual([]);

    expect(await relay().runOnce()).toMatchObject({ failed: 0 });
    expect(await outboxRows(t.engine.database, order.id)).toMatchObject([{ state: 'delivered' }]);
    expect(await emailRows(t.engine.database, order.id)).toEqual([{ tenant: B.tenant, kind: 'order-confirmation' }]);
  });
});
