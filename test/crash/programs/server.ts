import { drizzle } from 'drizzle-orm/node-postgres';
import Fastify from 'fastify';
import pg from 'pg';
import { atomic, leased } from '../../../src/adapters/fastify/index.js';
import { fromDrizzle } from '../../../src/postgres/clients/from-drizzle.js';
import { fromPg, portable } from '../../../src/postgres/index.js';
import { crashConfig, payments } from './operations.js';

// A service under crash tests: an atomic orders route and a leased payments route.
const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 20 });
// The same service over Drizzle: retrysafe's statements and the handlers' writes run in Drizzle's transaction.
const database =
  process.env.DATA_LAYER === 'drizzle-pg' ? portable(fromDrizzle(drizzle({ client: pool }))) : portable(fromPg(pool));
const config = crashConfig(database);
const tenant = (request: { headers: Record<string, unknown> }): string | undefined => {
  const value = request.headers['x-tenant'];
  return typeof value === 'string' ? value : undefined;
};

const app = Fastify();
app.post(
  '/orders',
  atomic(config, {
    operation: 'orders.create@1',
    tenant,
    async handler({ tx, input, tenant: owner }) {
      const { rows } = await tx.query<{ id: number }>('INSERT INTO orders (tenant, sku) VALUES ($1, $2) RETURNING id', [
        owner,
        (input as { sku: string }).sku,
      ]);
      const id = rows[0]?.id;
      return { status: 201, headers: { location: `/orders/${id}` }, body: { id, sku: (input as { sku: string }).sku } };
    },
  }),
);
const { operation, handler } = payments();
app.post('/payments', leased(config, { operation, tenant, handler }));

const address = await app.listen({ port: Number(process.env.PORT ?? 0), host: '127.0.0.1' });
process.stdout.write(`listening ${address}\n`);
