import type { FastifyInstance } from 'fastify';
import { atomic } from 'retrysafe/fastify';
import type { Idempotency } from 'retrysafe';
import type { SqlClient, SqlDatabase } from 'retrysafe/postgres';
import { authenticated, type Tokens } from '../infrastructure/auth.js';
import { createOrderRoute } from './create-order.js';
import { checkCartId, failed } from './input.js';
import { orderView } from './order-view.js';
import { orderProblem } from '../infrastructure/problem.js';
import { LIST_ORDERS, type OrderRow, READ_ORDER } from '../data/queries.js';

export interface OrderRoutesOptions {
  readonly database: SqlDatabase<SqlClient>;
  readonly idempotency: Idempotency<SqlClient>;
  readonly tokens: Tokens;
}

interface OrderParams {
  readonly Params: { readonly id: string };
}

interface OrderListQuery {
  /** A repeated parameter arrives as an array, so it is checked rather than trusted. */
  readonly Querystring: { readonly cart_id?: unknown };
}

const LIST_LIMIT = 100;

export function orderRoutes(app: FastifyInstance, { database, idempotency, tokens }: OrderRoutesOptions): void {
  app.post('/v1/orders', atomic(idempotency, createOrderRoute(tokens)));

  app.get<OrderParams>(
    '/v1/orders/:id',
    authenticated<OrderParams>(tokens, async (request, tenant) => {
      const [order] = (await database.query<OrderRow>(READ_ORDER, [tenant, request.params.id])).rows;
      // Another tenant's order is as absent as one that never existed.
      if (order === undefined) return orderProblem('not-found', 'There is no such order.');
      return { status: 200, body: orderView(order) };
    }),
  );

  app.get<OrderListQuery>(
    '/v1/orders',
    authenticated<OrderListQuery>(tokens, async (request, tenant) => {
      const cartId = request.query.cart_id;
      if (cartId !== undefined) {
        const errors = checkCartId(cartId);
        if (errors.length > 0) return failed(errors).problem;
      }
      const { rows } = await database.query<OrderRow>(LIST_ORDERS, [tenant, cartId ?? null, LIST_LIMIT]);
      return { status: 200, body: { orders: rows.map(orderView) } };
    }),
  );
}
