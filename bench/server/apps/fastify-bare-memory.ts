import Fastify from 'fastify';
import type { AppEnv } from '../app-env.js';
import { countedPool } from '../counted-pool.js';
import { createOrder, keyOf, orderLocation, parseOrder, tenantOf } from '../orders.js';
import type { RunningApp } from '../running-app.js';
import { listenFastify } from './listen.js';

interface Kept {
  readonly location: string;
  readonly body: string;
}

/**
 * Am: the bare endpoint that keeps each key's answer in a Map and sends it
 * again, with no check of any kind (no fingerprint, no expiry, no bound, no
 * concurrency control). Not idempotency anyone should ship: the most a replay
 * answered from memory can reach in Fastify on this machine.
 */
export async function fastifyBareMemory(env: AppEnv): Promise<RunningApp> {
  const { pool, roundTrips } = countedPool(env.databaseUrl, env.poolSize);
  const kept = new Map<string, Kept>();
  const app = Fastify();
  app.post('/orders', async (request, reply) => {
    const tenant = tenantOf(request.headers);
    const key = keyOf(request.headers);
    const known = key === undefined ? undefined : kept.get(`${tenant}\n${key}`);
    if (known !== undefined) {
      return reply.code(201).header('location', known.location).header('content-type', 'application/json; charset=utf-8').header('idempotent-replayed', 'true').send(known.body);
    }
    const input = parseOrder(request.body);
    if (tenant === undefined || input === undefined) return reply.code(400).send({ error: 'bad request' });
    const order = await createOrder(pool, tenant, input, key);
    const answer = { location: orderLocation(order), body: JSON.stringify(order) };
    if (key !== undefined) kept.set(`${tenant}\n${key}`, answer);
    return reply.code(201).header('location', answer.location).header('content-type', 'application/json; charset=utf-8').send(answer.body);
  });
  return listenFastify(app, { pgRoundTrips: roundTrips, close: () => pool.end() });
}
