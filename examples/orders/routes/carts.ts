import type { FastifyInstance } from 'fastify';
import type { SqlClient, SqlDatabase } from 'retrysafe/postgres';
import { authenticated, type Tokens } from '../infrastructure/auth.js';
import { checkCartId, checkCartItems, failed } from './input.js';
import { orderProblem } from '../infrastructure/problem.js';
import { type CartRow, READ_CART, UPSERT_CART } from '../data/queries.js';

export interface CartRoutesOptions {
  readonly database: SqlDatabase<SqlClient>;
  readonly tokens: Tokens;
}

interface CartParams {
  readonly Params: { readonly cart_id: string };
}

/**
 * `PUT /v1/carts/:cart_id` sets the whole cart, so repeating it changes
 * nothing: it needs no Idempotency-Key. `GET` reads it back.
 */
export function cartRoutes(app: FastifyInstance, { database, tokens }: CartRoutesOptions): void {
  app.put<CartParams>(
    '/v1/carts/:cart_id',
    authenticated<CartParams>(tokens, async (request, tenant) => {
      const cartId = request.params.cart_id;
      const idErrors = checkCartId(cartId);
      if (idErrors.length > 0) return failed(idErrors).problem;
      const items = checkCartItems(request.body);
      if (!items.ok) return items.problem;
      const cart = await database.transaction(async (sql) => {
        const { rows } = await sql.query<CartRow>(UPSERT_CART, [tenant, cartId, JSON.stringify(items.value)]);
        return rows[0] ?? (await sql.query<CartRow>(READ_CART, [tenant, cartId])).rows[0];
      });
      if (cart === undefined) throw new Error('A cart that was just written could not be read back.');
      return { status: 200, body: cartView(cartId, cart) };
    }),
  );

  app.get<CartParams>(
    '/v1/carts/:cart_id',
    authenticated<CartParams>(tokens, async (request, tenant) => {
      const cartId = request.params.cart_id;
      const { rows } = await database.query<CartRow>(READ_CART, [tenant, cartId]);
      const [cart] = rows;
      if (cart === undefined) return orderProblem('not-found', 'There is no such cart.');
      return { status: 200, body: cartView(cartId, cart) };
    }),
  );
}

/** jsonb reorders object keys, so the items are rebuilt in the order the API documents. */
function cartView(cartId: string, cart: CartRow): Record<string, unknown> {
  return { cart_id: cartId, cart_version: cart.cart_version, items: cart.items.map(({ sku, qty }) => ({ sku, qty })) };
}
