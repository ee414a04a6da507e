import Fastify, { type FastifyRequest } from 'fastify';
import type pg from 'pg';
import type { AtomicRoute, ReadBeforeClaim } from '../../../src/index.js';
import type { AppEnv } from '../app-env.js';
import { countedPool } from '../counted-pool.js';
import { insertOrder, type OrderInput, orderLocation, parseOrder, tenantOf } from '../orders.js';
import { fastifyAdapter, fromPg, idempotency, invalid, postgresStore, valid } from '../retrysafe.js';
import type { RunningApp } from '../running-app.js';
import { listenFastify } from './listen.js';

const { atomic } = fastifyAdapter;

/** The order route in atomic mode, for any framework adapter. */
export function orderRoute<Req extends { headers: Record<string, string | string[] | undefined> }>(): AtomicRoute<
  Req,
  OrderInput,
  pg.PoolClient
> {
  return {
    operation: 'orders.create@1',
    tenant: (request) => tenantOf(request.headers),
    input: (_request, body) => {
      const input = parseOrder(body);
      return input === undefined ? invalid({ status: 400, body: { error: 'bad request' } }) : valid(input);
    },
    async handler({ tx, input, tenant, identity }) {
      const order = await insertOrder(tx, tenant, input, identity?.key);
      return { status: 201, headers: { location: orderLocation(order) }, body: order };
    },
  };
}

/** Variants of the atomic app, each measured against plain B and C. */
export interface AtomicVariant {
  /** Fix whether a finished operation is answered by a read before the transaction (default: auto). */
  readonly readBeforeClaim?: ReadBeforeClaim;
  /** `fromPg(pool, { preparedStatements: false })`: each statement unnamed, in its own round trip, as behind a pooler in transaction mode. */
  readonly unnamed?: boolean;
  /** Keep finished records in the server's memory (`replayCache`). */
  readonly replayCache?: boolean;
  /** node-postgres' pipeline mode: BEGIN goes with the claim, the record with COMMIT. */
  readonly pipeline?: boolean;
}

/** B, C and D: retrysafe's atomic mode, as is or in a variant. */
export function fastifyAtomic(variant: AtomicVariant = {}) {
  return async function start(env: AppEnv): Promise<RunningApp> {
    const { pool, roundTrips } = countedPool(env.databaseUrl, env.poolSize, false, variant.pipeline === true);
    const database = fromPg(pool, {
      pipeline: variant.pipeline === true,
      preparedStatements: variant.unnamed !== true,
    });
    const store = postgresStore(database);
    const config = idempotency({
      store,
      replayCache: variant.replayCache === true,
      ...(variant.readBeforeClaim === undefined ? {} : { readBeforeClaim: variant.readBeforeClaim }),
    });
    const app = Fastify();
    app.post('/orders', atomic(config, orderRoute<FastifyRequest>()));
    return listenFastify(app, { pgRoundTrips: roundTrips, close: () => pool.end() });
  };
}
