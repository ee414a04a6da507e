import express from 'express';
import type { AppEnv } from '../app-env.js';
import { countedPool } from '../counted-pool.js';
import { createOrder, keyOf, orderLocation, parseOrder, tenantOf } from '../orders.js';
import type { RunningApp } from '../running-app.js';
import { answerError } from './express-errors.js';
import { listenExpress } from './listen.js';

/** A on Express 5: the endpoint with no idempotency layer. */
export async function expressBare(env: AppEnv): Promise<RunningApp> {
  const { pool, roundTrips } = countedPool(env.databaseUrl, env.poolSize);
  const app = express();
  app.post('/orders', express.json(), async (req, res) => {
    const tenant = tenantOf(req.headers);
    const input = parseOrder(req.body);
    if (tenant === undefined || input === undefined) {
      res.status(400).json({ error: 'bad request' });
      return;
    }
    const order = await createOrder(pool, tenant, input, keyOf(req.headers));
    res.status(201).location(orderLocation(order)).json(order);
  });
  app.use(answerError);
  return listenExpress(app, { pgRoundTrips: roundTrips, close: () => pool.end() });
}
