import { expect } from 'vitest';
import { call, json } from './http.js';

/** A caller: a demo token and the tenant it stands for. */
export interface Caller {
  readonly token: string;
  readonly tenant: string;
}

export interface PlacedOrder {
  readonly id: string;
  readonly tenant: string;
  readonly totalCents: number;
}

/** Fills cart `cartId` and orders it, with `key` (default: one per cart), insisting on 201. */
export async function placeOrder(
  url: string,
  caller: Caller,
  cartId: string,
  key = `order-${cartId}`,
): Promise<PlacedOrder> {
  const cart = await call(url, 'PUT', `/v1/carts/${cartId}`, {
    token: caller.token,
    json: { items: [{ sku: 'WIDGET-1', qty: 2 }] },
  });
  expect(cart.status).toBe(200);
  const body = { cart_id: cartId, cart_version: json(cart).cart_version, delivery_option: 'standard' };
  const placed = await call(url, 'POST', '/v1/orders', { token: caller.token, key, json: body });
  expect(placed.status).toBe(201);
  return { id: json(placed).id as string, tenant: caller.tenant, totalCents: json(placed).total_cents as number };
}
