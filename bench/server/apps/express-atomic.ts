import express, { type Request } from 'express';
import type { AppEnv } from '../app-env.js';
import { countedPool } from '../counted-pool.js';
import { expressAdapter, fromPg, idempotency, postgresStore } from '../retrysafe.js';
import type { RunningApp } from '../running-app.js';
import { answerError } from './express-errors.js';
import { orderRoute } from './fastify-atomic.js';
import { listenExpress } from './listen.js';

const { atomic, keepRawBody } = expressAdapter;

/** B, C and D on Express 5: retrysafe's atomic mode. */
export async function expressAtomic(env: AppEnv): Promise<RunningApp> {
  const { pool, roundTrips } = countedPool(env.databaseUrl, env.poolSize);
  const config = idempotency({ store: postgresStore(fromPg(pool)) });
  const app = express();
  // As the docs tell: the body's text is kept, so that numbers are checked against what was sent.
  app.post('/orders', express.json({ verify: keepRawBody }), atomic(config, orderRoute<Request>()));
  app.use(answerError);
  return listenExpress(app, { pgRoundTrips: roundTrips, close: () => pool.end() });
}
