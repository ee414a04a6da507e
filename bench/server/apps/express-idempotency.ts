import express from 'express';
import type { AppEnv } from '../app-env.js';
import { type CallCounter, countCalls } from '../counted-calls.js';
import { countedPool } from '../counted-pool.js';
import { createOrder, keyOf, orderLocation, parseOrder, tenantOf } from '../orders.js';
import { loadExpressIdempotency } from '../peers/express-idempotency.js';
import type { RunningApp } from '../running-app.js';
import { answerError } from './express-errors.js';
import { listenExpress } from './listen.js';

/**
 * `express-idempotency` with `express-idempotency-redis-adapter`, as their
 * READMEs wire them: the middleware before the route, the route checks
 * `isHit` and reports its errors.
 */
export async function expressIdempotency(env: AppEnv): Promise<RunningApp> {
  const peer = await loadExpressIdempotency();
  const redisCalls: CallCounter = { count: 0 };
  const adapter = countCalls(
    new peer.RedisAdapter({ connectionConfig: { url: env.redisUrl } }),
    ['findByIdempotencyKey', 'create', 'update', 'delete'],
    redisCalls,
  );
  await adapter.connect();
  const { pool, roundTrips } = countedPool(env.databaseUrl, env.poolSize);
  const app = express();
  app.post('/orders', express.json(), peer.middleware.idempotency({ dataAdapter: adapter }), async (req, res) => {
    const service = peer.middleware.getSharedIdempotencyService();
    if (service.isHit(req)) return;
    const tenant = tenantOf(req.headers);
    const input = parseOrder(req.body);
    if (tenant === undefined || input === undefined) {
      res.status(400).json({ error: 'bad request' });
      return;
    }
    try {
      const order = await createOrder(pool, tenant, input, keyOf(req.headers));
      res.status(201).location(orderLocation(order)).json(order);
    } catch (error) {
      await service.reportError(req);
      throw error;
    }
  });
  app.use(answerError);
  return listenExpress(app, {
    pgRoundTrips: roundTrips,
    redisCommands: () => redisCalls.count,
    async close() {
      await adapter.disconnect();
      await pool.end();
    },
  });
}
