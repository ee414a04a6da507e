import Fastify, { type FastifyInstance } from 'fastify';
import { createOrderRoute } from '../../../examples/orders/routes/create-order.js';
import { respond } from '../../../examples/orders/infrastructure/respond.js';
import type { SqlClient, SqlDatabase } from '../../../src/index.js';
import type { AppEnv } from '../app-env.js';
import { countedPool } from '../counted-pool.js';
import { fastifyAdapter, fromPg, idempotency, portable, postgresStore } from '../retrysafe.js';
import type { RunningApp } from '../running-app.js';
import { SERVICE_TENANT, SERVICE_TOKEN } from '../service.js';
import { listenFastify } from './listen.js';

const { atomic } = fastifyAdapter;

const route = createOrderRoute(new Map([[SERVICE_TOKEN, SERVICE_TENANT]]));

/**
 * R: the reference service's own `POST /v1/orders` (cart read, order INSERT,
 * outbox enqueue), its route served by `serve`, on the service's data layer.
 */
function serviceApp(serve: (app: FastifyInstance, database: SqlDatabase<SqlClient>) => void) {
  return async function start(env: AppEnv): Promise<RunningApp> {
    const { pool, roundTrips } = countedPool(env.databaseUrl, env.poolSize);
    const app = Fastify();
    serve(app, portable(fromPg(pool)));
    return listenFastify(app, { pgRoundTrips: roundTrips, close: () => pool.end() });
  };
}

/** R-A: the same route's tenant, input and handler in one plain transaction, without retrysafe. */
export const serviceBare = serviceApp((app, database) => {
  app.post('/v1/orders', async (request, reply) => {
    const tenant = await route.tenant(request);
    if (tenant === undefined) return reply.code(401).send();
    const input = await route.input?.(request, request.body);
    if (input === undefined) throw new Error('the service validates its input');
    if (!input.valid) return respond(reply, input.reply);
    const answer = await database.transaction((tx) =>
      route.handler({ request, input: input.value, tx, tenant, identity: undefined }),
    );
    return respond(reply, answer);
  });
});

/** R-B: the route as the service serves it, in retrysafe's atomic mode with its defaults. */
export const serviceAtomic = serviceApp((app, database) => {
  app.post('/v1/orders', atomic(idempotency({ store: postgresStore(database) }), route));
});
