import Fastify from 'fastify';
import { providerClient } from '../../../examples/provider/client.js';
import type { AppEnv } from '../app-env.js';
import { countedPool } from '../counted-pool.js';
import { createOrder, keyOf, orderLocation, parseOrder, tenantOf } from '../orders.js';
import type { RunningApp } from '../running-app.js';
import { chargeOrder, providerUrlOf } from './charge.js';
import { listenFastify } from './listen.js';

/** A': the leased scenario's endpoint without retrysafe: charge, then BEGIN, INSERT, COMMIT. */
export async function fastifyBareProvider(env: AppEnv): Promise<RunningApp> {
  const provider = providerClient(providerUrlOf(env));
  const { pool, roundTrips } = countedPool(env.databaseUrl, env.poolSize);
  const app = Fastify();
  app.post('/orders', async (request, reply) => {
    const tenant = tenantOf(request.headers);
    const key = keyOf(request.headers);
    const input = parseOrder(request.body);
    if (tenant === undefined || key === undefined || input === undefined)
      return reply.code(400).send({ error: 'bad request' });
    const charge = await chargeOrder(provider, `${tenant}:${key}`, input);
    const order = await createOrder(pool, tenant, input, key);
    return reply
      .code(201)
      .header('location', orderLocation(order))
      .send({ ...order, charge });
  });
  return listenFastify(app, { pgRoundTrips: roundTrips, close: () => pool.end() });
}
