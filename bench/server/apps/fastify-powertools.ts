import Fastify from 'fastify';
import type { AppEnv } from '../app-env.js';
import { type CallCounter, countCalls } from '../counted-calls.js';
import { countedPool } from '../counted-pool.js';
import { createOrder, keyOf, type OrderInput, orderLocation, parseOrder, tenantOf } from '../orders.js';
import { loadPowertools } from '../peers/powertools.js';
import type { RunningApp } from '../running-app.js';
import { listenFastify } from './listen.js';

interface CreateOrderEvent {
  readonly tenant: string;
  readonly key: string;
  readonly order: OrderInput;
}

/** How long an in-progress record protects its key; in Lambda, the invocation's remaining time. */
const IN_PROGRESS_MS = 30_000;

/** How a Powertools app is configured. */
export interface PowertoolsSetup {
  /**
   * Outside Lambda there is no invocation context; this gives it a constant
   * remaining time, without which an in-progress record counts as orphaned
   * (see docs/performance.md).
   */
  readonly registerContext: boolean;
  /** `payloadValidationJmesPath`: Powertools' counterpart of a fingerprint. Off by default. */
  readonly validatePayload: boolean;
}

/**
 * `@aws-lambda-powertools/idempotency`: `makeIdempotent` around the order
 * function, with its Redis (cache) persistence layer, in a Fastify 5 route.
 */
export function fastifyPowertools(setup: PowertoolsSetup) {
  return async function start(env: AppEnv): Promise<RunningApp> {
    const peer = await loadPowertools();
    const redisCalls: CallCounter = { count: 0 };
    const client = await countCalls(
      peer.redis.createClient({ url: env.redisUrl }),
      ['get', 'set', 'del'],
      redisCalls,
    ).connect();
    const config = new peer.idempotency.IdempotencyConfig({
      eventKeyJmesPath: '[tenant, key]',
      throwOnNoIdempotencyKey: true,
      ...(setup.validatePayload ? { payloadValidationJmesPath: 'order' } : {}),
    });
    if (setup.registerContext) config.registerLambdaContext({ getRemainingTimeInMillis: () => IN_PROGRESS_MS });
    const { pool, roundTrips } = countedPool(env.databaseUrl, env.poolSize);
    const createIdempotently = peer.idempotency.makeIdempotent(
      (event: CreateOrderEvent) => createOrder(pool, event.tenant, event.order, event.key),
      {
        persistenceStore: new peer.cache.CachePersistenceLayer({ client }),
        config,
        keyPrefix: `${env.tag}.orders.create`,
      },
    );

    const app = Fastify();
    app.post('/orders', async (request, reply) => {
      const tenant = tenantOf(request.headers);
      const key = keyOf(request.headers);
      const input = parseOrder(request.body);
      if (tenant === undefined || key === undefined || input === undefined)
        return reply.code(400).send({ error: 'bad request' });
      try {
        const order = await createIdempotently({ tenant, key, order: input });
        return await reply.code(201).header('location', orderLocation(order)).send(order);
      } catch (error) {
        const name = error instanceof Error ? error.name : '';
        if (name === 'IdempotencyAlreadyInProgressError')
          return reply.code(409).header('retry-after', '1').send({ error: name });
        if (name === 'IdempotencyValidationError') return reply.code(422).send({ error: name });
        throw error;
      }
    });
    return listenFastify(app, {
      pgRoundTrips: roundTrips,
      redisCommands: () => redisCalls.count,
      async close() {
        await client.close();
        await pool.end();
      },
    });
  };
}
