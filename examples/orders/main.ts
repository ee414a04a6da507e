import type { FastifyInstance } from 'fastify';
import { RecoveryWorker } from '../../src/index.js';
import { postgresStore } from '../../src/postgres/index.js';
import { buildApp, paymentIdempotency } from './app.js';
import { paymentOperation } from './create-payment.js';
import { type OpenProvider, openProvider } from './open-provider.js';
import { loadConfig, type ServiceConfig } from './config.js';
import { type OpenDatabase, openDatabase } from './open-database.js';
import { prepareDatabase } from './schema.js';

/** `npm start`: the orders service, on PostgreSQL when DATABASE_URL is set, otherwise on PGlite in DATA_DIR. */
async function main(): Promise<void> {
  const loaded = loadConfig(process.env);
  if (!loaded.ok) {
    console.error(`orders: cannot start:\n  ${loaded.errors.join('\n  ')}`);
    process.exitCode = 1;
    return;
  }
  const { config } = loaded;
  const opened = await openDatabase(config.database);
  const provider = await openProvider(config.provider);
  const recovery = new AbortController();
  let app: FastifyInstance | undefined;
  try {
    await prepareDatabase(opened.database);
    app = buildApp({ database: opened.database, tokens: config.tokens, logger: true, provider: provider.client });
    const url = await app.listen({ port: config.port, host: config.host });
    // Finishes payments that a crash left half done; retries of them resume on their own too.
    const worker = new RecoveryWorker({ config: paymentIdempotency(postgresStore(opened.database)), operations: [paymentOperation(provider.client)] });
    void worker.run(recovery.signal);
    console.log(banner(config, url, opened, provider));
  } catch (error) {
    await app?.close();
    await provider.close();
    await opened.close();
    throw error;
  }
  const server = app;
  stopOnSignal(async () => {
    recovery.abort();
    await server.close();
    await provider.close();
    await opened.close();
  });
}

function stopOnSignal(closeAll: () => Promise<void>): void {
  let stopping = false;
  const stop = (signal: NodeJS.Signals) => {
    // A second signal means "now": the first one's clean stop is taking too long.
    if (stopping) process.exit(1);
    stopping = true;
    console.log(`orders: ${signal}, stopping`);
    // In-flight requests finish before the database closes under them.
    closeAll().catch((error: unknown) => {
      console.error('orders: unclean stop', error);
      process.exitCode = 1;
    });
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

function banner(config: ServiceConfig, url: string, opened: OpenDatabase, provider: OpenProvider): string {
  const tokens = config.demoTokens
    ? `demo tokens: ${[...config.tokens].map(([token, tenant]) => `${token} (${tenant})`).join(', ')}`
    : `${config.tokens.size} tokens from RETRYSAFE_TOKENS`;
  const example = config.demoTokens ? [...config.tokens.keys()][0] : '<token>';
  return [
    `orders service listening on ${url}`,
    `data: ${opened.description}`,
    `payments: ${provider.description}`,
    tokens,
    `try: curl -X PUT ${url}/v1/carts/c1 -H 'Authorization: Bearer ${example}' -H 'Content-Type: application/json' -d '{"items":[{"sku":"WIDGET-1","qty":2}]}'`,
  ].join('\n');
}

main().catch((error: unknown) => {
  console.error('orders: failed to start', error);
  process.exitCode = 1;
});
