import Fastify, { type FastifyReply } from 'fastify';
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
  const answer = (reply: FastifyReply, { location, body }: Kept) =>
    reply.code(201).header('location', location).header('content-type', 'application/json; charset=utf-8').send(body);
  app.post('/orders', async (request, reply) => {
    const tenant = tenantOf(request.headers);
    const key = keyOf(request.headers);
    const name = key === undefined ? undefined : `${tenant}\n${key}`;
    const known = name === undefined ? undefined : kept.get(name);
    if (known !== undefined) return answer(reply.header('idempotent-replayed', 'true'), known);
    const input = parseOrder(request.body);
    if (tenant === undefined || input === undefined) return reply.code(400).send({ error: 'bad request' });
    const order = await createOrder(pool, tenant, input, key);
    const first = { location: orderLocation(order), body: JSON.stringify(order) };
    if (name !== undefined) kept.set(name, first);
    return answer(reply, first);
  });
  return listenFastify(app, { pgRoundTrips: roundTrips, close: () => pool.end() });
}
