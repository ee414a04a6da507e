import Fastify, { type FastifyRequest } from 'fastify';
import type { AppEnv } from '../app-env.js';
import { type CallCounter, countCalls } from '../counted-calls.js';
import { countedPool } from '../counted-pool.js';
import { createOrder, keyOf, orderLocation, parseOrder, tenantOf } from '../orders.js';
import { loadNodeIdempotency, type NodeIdempotencyRequest } from '../peers/node-idempotency.js';
import type { RunningApp } from '../running-app.js';
import { listenFastify } from './listen.js';

/** The statuses `@node-idempotency`'s framework plugins answer for each error code. */
const STATUS_OF_CODE: Record<string, number> = {
  IDEMPOTENCY_KEY_LEN_EXEEDED: 400,
  IDEMPOTENCY_KEY_MISSING: 400,
  IDEMPOTENCY_FINGERPRINT_MISSMATCH: 422,
  REQUEST_IN_PROGRESS: 409,
};

/**
 * `@node-idempotency/core` with its Redis storage, wired into Fastify 5 as the
 * core's README describes: `onRequest` before the handler, `onResponse` once
 * the first attempt has its response. Its Fastify plugin is not published on
 * the registry, so the wiring is written here.
 */
export async function fastifyNodeIdempotency(env: AppEnv): Promise<RunningApp> {
  const peer = await loadNodeIdempotency();
  const redisCalls: CallCounter = { count: 0 };
  const storage = countCalls(
    new peer.redis.RedisStorageAdapter({ url: env.redisUrl }),
    ['setIfNotExists', 'set', 'get'],
    redisCalls,
  );
  await storage.connect();
  const guard = new peer.core.Idempotency(storage, {});
  const { pool, roundTrips } = countedPool(env.databaseUrl, env.poolSize);
  const firstAttempts = new WeakSet<FastifyRequest>();
  const described = (request: FastifyRequest): NodeIdempotencyRequest => ({
    headers: request.headers,
    path: request.url,
    method: request.method,
    body: request.body as Record<string, unknown>,
  });

  const app = Fastify();
  app.post(
    '/orders',
    {
      async preHandler(request, reply) {
        try {
          const stored = await guard.onRequest(described(request));
          if (stored === undefined) {
            firstAttempts.add(request);
            return;
          }
          const { statusCode, contentType } = stored.additional ?? {};
          return reply
            .code(typeof statusCode === 'number' ? statusCode : 200)
            .header('content-type', typeof contentType === 'string' ? contentType : 'application/json')
            .header('idempotent-replayed', 'true')
            .send(stored.body ?? stored.error);
        } catch (error) {
          if (!(error instanceof peer.core.IdempotencyError)) throw error;
          if (error.code === 'REQUEST_IN_PROGRESS') void reply.header('retry-after', '1');
          return reply.code(STATUS_OF_CODE[error.code] ?? 500).send({ error: error.code });
        }
      },
      async onSend(request, reply, payload) {
        if (!firstAttempts.delete(request)) return payload;
        const additional = {
          statusCode: reply.statusCode,
          contentType: reply.getHeader('content-type'),
          location: reply.getHeader('location'),
        };
        await guard.onResponse(
          described(request),
          reply.statusCode < 400 ? { additional, body: payload } : { additional, error: payload },
        );
        return payload;
      },
    },
    async (request, reply) => {
      const tenant = tenantOf(request.headers);
      const input = parseOrder(request.body);
      if (tenant === undefined || input === undefined) return reply.code(400).send({ error: 'bad request' });
      const order = await createOrder(pool, tenant, input, keyOf(request.headers));
      return reply.code(201).header('location', orderLocation(order)).send(order);
    },
  );
  return listenFastify(app, {
    pgRoundTrips: roundTrips,
    redisCommands: () => redisCalls.count,
    async close() {
      await storage.disconnect();
      await pool.end();
    },
  });
}
