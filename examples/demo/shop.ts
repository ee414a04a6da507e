import type { AddressInfo } from 'node:net';
import Fastify from 'fastify';
import { atomic } from 'retrysafe/fastify';
import { idempotency, invalid, valid, type Validation } from 'retrysafe';
import { postgresStore, type SqlClient, type SqlDatabase } from 'retrysafe/postgres';

export interface Shop {
  readonly url: string;
  close(): Promise<void>;
}

export interface OrderInput {
  readonly sku: string;
  /** Which client placed it, so the database can count each one's rows. */
  readonly client: string;
}

const ORDERS_TABLE = `CREATE TABLE IF NOT EXISTS demo_orders (
  id integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY, client text NOT NULL, sku text NOT NULL)`;

function orderInput(body: unknown): Validation<OrderInput> {
  if (
    typeof body === 'object' &&
    body !== null &&
    'sku' in body &&
    'client' in body &&
    typeof body.sku === 'string' &&
    typeof body.client === 'string'
  ) {
    return valid({ sku: body.sku, client: body.client });
  }
  return invalid({
    status: 400,
    headers: { 'content-type': 'application/problem+json' },
    body: { title: 'An order needs "sku" and "client"', status: 400 },
  });
}

/**
 * `POST /orders` in atomic mode, where a key is optional: with one, retries are
 * deduplicated; without, every attempt that arrives is a new order, as on an
 * API that does not use keys.
 */
export async function startShop(database: SqlDatabase<SqlClient>): Promise<Shop> {
  await database.query(ORDERS_TABLE);
  const config = idempotency({ store: postgresStore(database) });
  const app = Fastify();
  // One request per connection, so the lossy proxy decides for each answer.
  app.addHook('onRequest', async (_request, reply) => {
    reply.header('connection', 'close');
  });
  app.post(
    '/orders',
    atomic(config, {
      operation: 'demo.orders.create@1',
      keyRequired: false,
      tenant: () => 'demo',
      input: (_request, body) => orderInput(body),
      async handler({ tx, input }) {
        const { rows } = await tx.query<{ id: number }>(
          'INSERT INTO demo_orders (client, sku) VALUES ($1, $2) RETURNING id',
          [input.client, input.sku],
        );
        return { status: 201, body: rows[0] };
      },
    }),
  );
  await app.listen({ port: 0, host: '127.0.0.1' });
  const { port } = app.server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, close: () => app.close() };
}

/** The database's own count of orders, by client. */
export async function countOrders(database: SqlDatabase<SqlClient>): Promise<Map<string, number>> {
  const { rows } = await database.query<{ client: string; orders: number }>(
    'SELECT client, count(*)::int AS orders FROM demo_orders GROUP BY client',
  );
  return new Map(rows.map((row) => [row.client, row.orders]));
}
