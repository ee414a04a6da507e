import Fastify, { type FastifyRequest } from 'fastify';
import type pg from 'pg';
import { providerClient } from '../../../examples/provider/client.js';
import type { LeasedRoute } from '../../../src/modes/leased-route.js';
import type { AppEnv } from '../app-env.js';
import { countedPool } from '../counted-pool.js';
import { insertOrder, type OrderInput, orderLocation, parseOrder, tenantOf } from '../orders.js';
import { fastifyAdapter, fromPg, idempotency, invalid, postgresStore, valid } from '../retrysafe.js';
import type { RunningApp } from '../running-app.js';
import { chargeOrder, providerUrlOf } from './charge.js';
import { listenFastify } from './listen.js';

const { leased } = fastifyAdapter;

/** E: retrysafe's leased mode, one step against the payment provider, then the order INSERT. */
export async function fastifyLeased(env: AppEnv): Promise<RunningApp> {
  const provider = providerClient(providerUrlOf(env));
  const { pool, roundTrips } = countedPool(env.databaseUrl, env.poolSize);
  const config = idempotency({ store: postgresStore(fromPg(pool)) });
  const route: LeasedRoute<FastifyRequest, OrderInput, pg.PoolClient> = {
    operation: 'orders.create@1',
    tenant: (request) => tenantOf(request.headers),
    input: (_request, body) => {
      const input = parseOrder(body);
      return input === undefined ? invalid({ status: 400, body: { error: 'bad request' } }) : valid(input);
    },
    async handler({ input, identity, step, local }) {
      const charge = await step('charge', (call) =>
        chargeOrder(provider, call.idempotencyKey, input, call.signal, call.fencingToken),
      );
      const order = await local('record-order', (tx) => insertOrder(tx, identity.tenant, input, identity.key));
      return { status: 201, headers: { location: orderLocation(order) }, body: { ...order, charge } };
    },
  };
  const app = Fastify();
  app.post('/orders', leased(config, route));
  return listenFastify(app, { pgRoundTrips: roundTrips, close: () => pool.end() });
}
