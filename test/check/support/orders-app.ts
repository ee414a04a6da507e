import { createServer } from 'node:http';
import express, { type Request } from 'express';
import { atomic, keepRawBody, specification } from '../../../src/adapters/express/index.js';
import { idempotency, invalid, valid } from '../../../src/index.js';
import { postgresStore } from '../../../src/postgres/index.js';
import type { Engine } from '../../support/engines.js';
import { type Listening, listen, tenantTokens } from './listen.js';

interface OrderInput {
  readonly sku: string;
  readonly qty: number;
}

interface OrderRow {
  readonly id: number;
  readonly sku: string;
  readonly qty: number;
}

export const ORDERS_TABLE =
  'CREATE TABLE orders (id serial PRIMARY KEY, tenant text NOT NULL, sku text NOT NULL, qty integer NOT NULL)';

const tenantOf = (req: Request): string | undefined => tenantTokens[req.get('authorization') ?? ''];

function isOrderInput(body: unknown): body is OrderInput {
  const candidate = body as Partial<OrderInput> | null;
  return typeof candidate?.sku === 'string' && Number.isInteger(candidate.qty) && (candidate.qty ?? 0) > 0;
}

/** Keys with this prefix keep their response one second, so a test can let one expire and sweep it. */
export const SHORT_LIVED = 'short-lived-';

/**
 * A conformant endpoint built on retrysafe's atomic route: POST /orders
 * creates an order per operation, GET /orders?sku= lists the caller's orders,
 * GET /idempotency is the specification its refusals link to. `workMs` keeps
 * each order's transaction open that long, so duplicates and retries meet a
 * first attempt still running.
 */
export function startOrdersApp(engine: Engine, workMs = 0): Promise<Listening> {
  const config = idempotency({ store: postgresStore(engine.database), specificationPath: '/idempotency' });
  const app = express();
  app.use(express.json({ verify: keepRawBody }));
  app.use(specification(config));
  app.post(
    '/orders',
    atomic(config, {
      operation: 'orders.create@1',
      tenant: tenantOf,
      retention: (identity) => (identity.key.startsWith(SHORT_LIVED) ? { responseSeconds: 1 } : {}),
      input: (_req, body) =>
        isOrderInput(body)
          ? valid(body)
          : invalid({ status: 400, body: { error: 'sku and a positive qty are required' } }),
      handler: async ({ tx, input, tenant }) => {
        if (workMs > 0) await tx.query('SELECT pg_sleep($1)', [workMs / 1000]);
        const { rows } = await tx.query<OrderRow>(
          'INSERT INTO orders (tenant, sku, qty) VALUES ($1, $2, $3) RETURNING id, sku, qty',
          [tenant, input.sku, input.qty],
        );
        const order = rows[0];
        return { status: 201, headers: { location: `/orders/${order?.id}` }, body: order };
      },
    }),
  );
  app.get('/orders', async (req, res) => {
    const tenant = tenantOf(req);
    if (tenant === undefined) return void res.status(401).json({ error: 'unauthenticated' });
    const sku = typeof req.query.sku === 'string' ? req.query.sku : null;
    const { rows } = await engine.database.query<OrderRow>(
      'SELECT id, sku, qty FROM orders WHERE tenant = $1 AND ($2::text IS NULL OR sku = $2) ORDER BY id',
      [tenant, sku],
    );
    res.json({ orders: rows });
  });
  return listen(createServer(app));
}
