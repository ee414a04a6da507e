import Fastify from 'fastify';
import { atomic } from '../../src/adapters/fastify/index.js';
import { invalid, valid } from '../../src/index.js';
import { idempotency } from '../../src/modes/idempotency.js';
import { fromPg, postgresStore } from '../../src/postgres/index.js';
import type pg from 'pg';
import { nodePool } from '../support/citus-cluster.js';

/** Orders by tenant, distributed with retrysafe's records: one row per order, its key kept to count duplicates. */
export const ORDERS_TABLE = `CREATE TABLE orders (
  tenant text NOT NULL, key text NOT NULL, sku text NOT NULL, PRIMARY KEY (tenant, key, sku))`;

/** An order service on one node: `POST /orders` in atomic mode, the tenant from the bearer token. */
export interface OrderApp {
  readonly url: string;
  /** How many times the handler ran, by key. */
  readonly runs: Map<string, number>;
  close(): Promise<void>;
}

export async function startOrderApp(databaseUrl: string): Promise<OrderApp> {
  const pool = nodePool(databaseUrl, 30);
  const config = idempotency({ store: postgresStore(fromPg(pool)) });
  const runs = new Map<string, number>();
  const app = Fastify();
  app.post(
    '/orders',
    atomic<{ sku: string }, pg.PoolClient>(config, {
      operation: 'orders.create@1',
      tenant: (request) => request.headers.authorization?.replace(/^Bearer /, ''),
      input: (_request, body) => {
        const sku = (body as { sku?: unknown } | undefined)?.sku;
        return typeof sku === 'string' ? valid({ sku }) : invalid({ status: 400, body: { error: 'sku' } });
      },
      async handler({ tx, tenant, input, identity }) {
        const key = identity?.key ?? '';
        runs.set(key, (runs.get(key) ?? 0) + 1);
        await tx.query('INSERT INTO orders (tenant, key, sku) VALUES ($1, $2, $3)', [tenant, key, input.sku]);
        return { status: 201, headers: { location: `/orders/${key}` }, body: { tenant, key, sku: input.sku } };
      },
    }),
  );
  await app.listen({ host: '127.0.0.1', port: 0 });
  const address = app.server.address();
  if (address === null || typeof address === 'string') throw new Error('the order service has no port');
  return {
    url: `http://127.0.0.1:${address.port}`,
    runs,
    async close() {
      await app.close();
      await pool.end();
    },
  };
}
