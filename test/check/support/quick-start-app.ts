import { createServer } from 'node:http';
import express from 'express';
import { atomic, keepRawBody } from '../../../src/adapters/express/index.js';
import { idempotency, invalid, valid, type Validation } from '../../../src/index.js';
import { postgresStore } from '../../../src/postgres/index.js';
import type { Engine } from '../../support/engines.js';
import { type Listening, listen } from './listen.js';

export const QUICK_START_TABLE =
  'CREATE TABLE quick_orders (id integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY, tenant text NOT NULL, sku text NOT NULL)';

interface Order {
  readonly id: number;
  readonly tenant: string;
  readonly sku: string;
}

/** The README's validator: it keeps `sku` and drops every other member. */
function orderInput(body: unknown): Validation<{ sku: string }> {
  if (typeof body === 'object' && body !== null && 'sku' in body && typeof body.sku === 'string' && body.sku !== '')
    return valid({ sku: body.sku });
  return invalid({
    status: 400,
    headers: { 'content-type': 'application/problem+json' },
    body: { type: 'https://example.com/problems/invalid-order', status: 400 },
  });
}

/** The route of the README's Express quick start, tenant from `X-Tenant`, on its own table. */
export function startQuickStartApp(engine: Engine): Promise<Listening> {
  const config = idempotency({ store: postgresStore(engine.database) });
  const app = express();
  app.post(
    '/orders',
    express.json({ verify: keepRawBody }),
    atomic(config, {
      operation: 'quick-orders.create@1',
      tenant: (req) => req.get('x-tenant'),
      input: (_req, body) => orderInput(body),
      async handler({ tx, input, tenant }) {
        const { rows } = await tx.query<Order>(
          'INSERT INTO quick_orders (tenant, sku) VALUES ($1, $2) RETURNING id, tenant, sku',
          [tenant, input.sku],
        );
        const order = rows[0];
        if (order === undefined) throw new Error('INSERT returned no row');
        return { status: 201, headers: { location: `/orders/${order.id}` }, body: order };
      },
    }),
  );
  return listen(createServer(app));
}
