import { randomBytes } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import { type AtomicRoute, type HandlerReply, invalid, valid } from 'retrysafe';
import { enqueue } from 'retrysafe/outbox';
import type { SqlClient } from 'retrysafe/postgres';
import { principalOf, type Tokens, tenantOf } from '../infrastructure/auth.js';
import { priceCart } from '../data/catalogue.js';
import { checkOrderRequest, type OrderRequest } from './input.js';
import { orderCreatedMessage } from '../messaging/order-created.js';
import { orderLocation, orderView } from './order-view.js';
import { orderProblem } from '../infrastructure/problem.js';
import {
  type CartRow,
  FIND_ORDER_FOR_CART_VERSION,
  INSERT_ORDER,
  LOCK_CART,
  type OrderRow,
  UPSERT_CART,
} from '../data/queries.js';

/**
 * `POST /v1/orders`, in retrysafe's atomic mode: the order, its
 * `order.created` message in the outbox and the stored answer commit
 * together. A rejection the business decides (unknown cart, stale version) is
 * an outcome and is stored; input that fails validation never reaches the store.
 */
export function createOrderRoute(tokens: Tokens): AtomicRoute<FastifyRequest, OrderRequest, SqlClient> {
  return {
    operation: 'orders.create@1',
    tenant: (request) => tenantOf(request, tokens),
    principal: (request) => principalOf(request),
    input(_request, body) {
      const checked = checkOrderRequest(body);
      return checked.ok ? valid(checked.value) : invalid(checked.problem);
    },
    handler: ({ tx, tenant, input }) => placeOrder(tx, tenant, input),
  };
}

async function placeOrder(tx: SqlClient, tenant: string, request: OrderRequest): Promise<HandlerReply> {
  const { cart_id: cartId, cart_version: cartVersion, delivery_option: delivery } = request;
  // A checkout in one request: the cart is put first, so an order for a new cart names a cart that exists.
  if (request.items !== undefined) await tx.query(UPSERT_CART, [tenant, cartId, JSON.stringify(request.items)]);
  const [cart] = (await tx.query<CartRow>(LOCK_CART, [tenant, cartId])).rows;
  if (cart === undefined) return orderProblem('cart-not-found', 'There is no cart with this cart_id.');
  if (cart.cart_version !== cartVersion) {
    return orderProblem(
      'cart-changed',
      `The cart is now at version ${cart.cart_version}; review it and check out that version.`,
      {
        members: { current_cart_version: cart.cart_version },
      },
    );
  }
  const pricing = priceCart(cart.items, delivery);
  if (!pricing.priced) return orderProblem('sku-unavailable', `${pricing.sku} is no longer sold; update the cart.`);
  const id = `ord_${randomBytes(12).toString('base64url')}`;
  const values = [tenant, id, cartId, cartVersion, delivery, JSON.stringify(pricing.lines), pricing.totalCents];
  const [created] = (await tx.query<OrderRow>(INSERT_ORDER, values)).rows;
  if (created === undefined) return orderExists(tx, tenant, request);
  await enqueue(tx, orderCreatedMessage({ order_id: created.id, tenant, total_cents: created.total_cents }));
  return { status: 201, headers: { location: orderLocation(created.id) }, body: orderView(created) };
}

/**
 * Another key already placed this cart version. A 409 is never stored and
 * rolls back, which is right: a retry finds the same order and gets this answer again.
 */
async function orderExists(tx: SqlClient, tenant: string, request: OrderRequest): Promise<HandlerReply> {
  const [existing] = (
    await tx.query<{ id: string }>(FIND_ORDER_FOR_CART_VERSION, [tenant, request.cart_id, request.cart_version])
  ).rows;
  const detail = 'An order was already placed for this cart version, with another Idempotency-Key.';
  if (existing === undefined) return orderProblem('order-exists', detail);
  return orderProblem('order-exists', detail, {
    headers: { location: orderLocation(existing.id) },
    members: { order_id: existing.id },
  });
}
