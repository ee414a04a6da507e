import { createServer } from 'node:http';
import express from 'express';
import { atomic, keepRawBody } from '../../src/adapters/express/index.js';
import { idempotency, invalid, valid } from '../../src/index.js';
import { postgresStore } from '../../src/postgres/index.js';
import type { SqlClient, SqlDatabase } from '../../src/store/sql-client.js';
import { listen } from '../support/listen.js';

const ORDERS_TABLE = 'CREATE TABLE IF NOT EXISTS orders (id serial PRIMARY KEY, sku text NOT NULL, qty int NOT NULL)';

export interface OrdersServer {
  readonly url: string;
  /** Every request that reached the route, with its key. */
  readonly requests: { readonly key: string | undefined; readonly status: number }[];
  /** Rows in `orders`, counted in SQL. */
  orders(): Promise<number>;
  /** Empties `orders` and forgets the requests, between tests. */
  reset(): Promise<void>;
  close(): Promise<void>;
}

export interface OrdersServerOptions {
  /** How long a duplicate waits for a running first attempt before 409. */
  readonly lockTimeoutMs?: number;
  /** Awaited inside the transaction, after the order row is written: lets a test hold an attempt open. */
  readonly beforeCommit?: () => Promise<void>;
}

/**
 * An Express 5 app on 127.0.0.1 with one atomic route, `POST /orders`: it
 * inserts one row into `orders` and answers 201 `{ id, sku, qty }`, all in the
 * transaction that holds the operation record.
 */
export async function startOrdersServer(
  database: SqlDatabase<SqlClient>,
  options: OrdersServerOptions = {},
): Promise<OrdersServer> {
  await database.query(ORDERS_TABLE);
  const config = idempotency({
    store: postgresStore(database),
    retryAfterSeconds: 1,
    ...(options.lockTimeoutMs === undefined ? {} : { lockTimeoutMs: options.lockTimeoutMs }),
  });
  const requests: { key: string | undefined; status: number }[] = [];
  const app = express();
  app.use((req, res, next) => {
    res.on('close', () => requests.push({ key: req.get('idempotency-key'), status: res.statusCode }));
    next();
  });
  app.post(
    '/orders',
    express.json({ verify: keepRawBody }),
    atomic(config, {
      operation: 'orders.create@1',
      tenant: () => 'tenant-a',
      input: (_req, body) => {
        const { sku, qty } = (body ?? {}) as { sku?: unknown; qty?: unknown };
        if (typeof sku !== 'string' || !Number.isInteger(qty))
          return invalid({ status: 400, body: { error: 'sku and qty are required' } });
        return valid({ sku, qty: qty as number });
      },
      handler: async ({ tx, input }) => {
        const { rows } = await tx.query<{ id: number }>('INSERT INTO orders (sku, qty) VALUES ($1, $2) RETURNING id', [
          input.sku,
          input.qty,
        ]);
        const id = rows[0]?.id;
        await options.beforeCommit?.();
        return { status: 201, headers: { location: `/orders/${id}` }, body: { id, sku: input.sku, qty: input.qty } };
      },
    }),
  );
  const server = createServer(app);
  const listening = await listen(server);
  return {
    url: listening.url,
    requests,
    orders: async () => (await database.query<{ n: number }>('SELECT count(*)::int AS n FROM orders')).rows[0]?.n ?? -1,
    async reset() {
      await database.query('TRUNCATE orders');
      requests.length = 0;
    },
    close: listening.close,
  };
}
