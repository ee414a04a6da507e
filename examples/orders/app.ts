import Fastify, { type FastifyInstance } from 'fastify';
import { defaultPolicy, type Idempotency, idempotency, type IdempotencyOptions } from 'retrysafe';
import { specification } from 'retrysafe/fastify';
import { type OperationStore, postgresStore, type SqlClient, type SqlDatabase } from 'retrysafe/postgres';
import type { ProviderClient } from '../provider/client.js';
import { schemaReady, type SchemaReadiness } from './data/schema-readiness.js';
import type { Tokens } from './infrastructure/auth.js';
import { renderError, useProblemErrors } from './infrastructure/error-handler.js';
import { healthRoute } from './infrastructure/health.js';
import { orderProblem } from './infrastructure/problem.js';
import { refuseAmbiguousRequests } from './infrastructure/request-guards.js';
import { respond } from './infrastructure/respond.js';
import { defaultServerTimeouts, type ServerTimeouts, serverLimits } from './infrastructure/server-limits.js';
import { cartRoutes } from './routes/carts.js';
import { orderRoutes } from './routes/orders.js';
import { paymentRoutes } from './routes/payments.js';
import { providerWebhookRoute } from './routes/provider-webhook-route.js';

export interface AppOptions {
  /** A database already prepared by `prepareDatabase`. */
  readonly database: SqlDatabase<SqlClient>;
  readonly tokens: Tokens;
  /** Request logging (pino). Default off. */
  readonly logger?: boolean;
  /** Largest accepted request body, in bytes. Default 64 KiB. */
  readonly bodyLimit?: number;
  /** retrysafe's settings; the store is always the service's own database. */
  readonly idempotency?: Omit<IdempotencyOptions<SqlClient>, 'store'>;
  /** The payment provider; without one, the payment routes are not served. */
  readonly provider?: ProviderClient;
  /** The secrets the provider signs its webhooks with; without them, `POST /webhooks/provider` is not served. */
  readonly webhookSecrets?: readonly string[];
  /** How long the server waits on a slow client. Default `defaultServerTimeouts`. */
  readonly serverTimeouts?: Partial<ServerTimeouts>;
  /** Whether the database is prepared yet. Default: it is. */
  readonly schema?: SchemaReadiness;
}

/** The orders service, ready to `listen`: used by `main.ts` and by the tests. */
export function buildApp(options: AppOptions): FastifyInstance {
  const { database, tokens } = options;
  // Logged through process.stdout, so request lines keep their order with the service's own lines (pino's default writer is asynchronous).
  const logger = options.logger === true ? { stream: process.stdout } : false;
  const app = Fastify({
    logger,
    bodyLimit: options.bodyLimit ?? 64 * 1024,
    frameworkErrors: renderError,
    ...serverLimits({ ...defaultServerTimeouts, ...options.serverTimeouts }),
  });
  // Only JSON bodies are read; anything else is 415 rather than a string the routes would have to refuse.
  app.removeContentTypeParser('text/plain');
  useProblemErrors(app);
  refuseAmbiguousRequests(app);

  const schema = options.schema ?? schemaReady;
  healthRoute(app, { database, schema });
  // Until the schema is prepared (the database was unreachable at start), only /healthz answers.
  app.addHook('onRequest', async (request, reply) => {
    if (schema.ready || request.url === '/healthz') return;
    return respond(
      reply,
      orderProblem('database-unavailable', 'The service is waiting for its database.', {
        headers: { 'retry-after': '1' },
      }),
    );
  });
  cartRoutes(app, { database, tokens });
  const store = postgresStore(database);
  // Each configuration publishes its routes' idempotency specification, expiry included, which its refusals link to.
  const orders = idempotency({ specificationPath: '/v1/idempotency', ...options.idempotency, store });
  orderRoutes(app, { database, tokens, idempotency: orders });
  void app.register(specification(orders));
  // Closing the server adds the console's last activity counts, before the database closes.
  app.addHook('onClose', () => orders.close());
  if (options.provider !== undefined) {
    const payments = paymentIdempotency(store, {
      specificationPath: '/v1/idempotency/payments',
      ...options.idempotency,
    });
    paymentRoutes(app, { database, tokens, provider: options.provider, idempotency: payments });
    void app.register(specification(payments));
    app.addHook('onClose', () => payments.close());
  }
  if (options.webhookSecrets !== undefined) providerWebhookRoute(app, { database, secrets: options.webhookSecrets });
  return app;
}

/**
 * Payments keep 409 `payment-exists` as an outcome: the order stays paid, so
 * a retry must get the same answer without charging. Also used by the
 * recovery worker, so that it finishes payments the same way.
 */
export function paymentIdempotency(
  store: OperationStore<SqlClient>,
  options: AppOptions['idempotency'] = {},
): Idempotency<SqlClient> {
  const transientStatuses = defaultPolicy.transientStatuses.filter((status) => status !== 409);
  return idempotency({ ...options, store, policy: { ...options.policy, transientStatuses } });
}
