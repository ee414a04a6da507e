import Fastify from 'fastify';
import type { AppEnv } from '../app-env.js';
import { countedPool } from '../counted-pool.js';
import { createOrder, keyOf, orderLocation, parseOrder, tenantOf } from '../orders.js';
import type { RunningApp } from '../running-app.js';
import { listenFastify } from './listen.js';

/** A: the endpoint with no idempotency layer. */
export async function fastifyBare(env: AppEnv): Promise<RunningApp> {
  const { pool, roundTrips } = countedPool(env.databaseUrl, env.poolSize);
  const app = Fastify();
  app.post('/orders', async (request, reply) => {
    const tenant = tenantOf(request.headers);
    const input = parseOrder(request.body);
    if (tenant === undefined || input === undefined) return reply.code(400).send({ error: 'bad request' });
    const order = await createOrder(pool, tenant, input, keyOf(request.headers));
    return reply.code(201).header('location', orderLocation(order)).send(order);
  });
  return listenFastify(app, { pgRoundTrips: roundTrips, close: () => pool.end() });
}
