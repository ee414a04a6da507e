import { randomBytes } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { buildApp } from './app.js';
import { SchemaPreparation } from './data/schema-readiness.js';
import { loadConfig, type ServiceConfig } from './infrastructure/config.js';
import { type OpenDatabase, openDatabase } from './infrastructure/open-database.js';
import { openProvider } from './infrastructure/open-provider.js';
import { retentionByTenant } from './infrastructure/retention.js';
import { type BackgroundWork, startBackgroundWork } from './messaging/background-work.js';
import { type OpenTransport, openTransport } from './messaging/open-transport.js';

/** `npm start`: the orders service, on PostgreSQL when DATABASE_URL is set, otherwise on PGlite in DATA_DIR. */
async function main(): Promise<void> {
  const loaded = loadConfig(process.env);
  if (!loaded.ok) {
    console.error(`orders: cannot start:\n  ${loaded.errors.join('\n  ')}`);
    process.exitCode = 1;
    return;
  }
  const { config } = loaded;
  // The local provider and the receiver share a secret made for this run, unless one is configured.
  const webhookSecret =
    config.webhookSecret ??
    (config.provider.kind === 'local' ? `whsec_${randomBytes(24).toString('base64')}` : undefined);
  const opened = await openDatabase(config.database);
  const provider = openProvider(config.provider, webhookSecret);
  const stopping = new AbortController();
  const idempotency = retentionByTenant(config.responseRetention);
  let app: FastifyInstance | undefined;
  let transport: OpenTransport | undefined;
  let background: BackgroundWork | undefined;
  try {
    // The service starts even while its database is unreachable: /healthz says so, and it serves once the schema is prepared.
    const schema = new SchemaPreparation(opened.database);
    app = buildApp({
      database: opened.database,
      tokens: config.tokens,
      idempotency,
      logger: true,
      provider: provider.client,
      webhookSecrets: webhookSecret === undefined ? undefined : [webhookSecret],
      schema,
    });
    const { log } = app;
    transport = await openTransport(config.broker, opened.database, (error) =>
      log.error({ err: error }, 'broker connection'),
    );
    const url = await app.listen({ port: config.port, host: config.host });
    // The local provider posts its payment.succeeded webhooks back to this service.
    const payments = await provider.start(`${url}/webhooks/provider`);
    console.log(banner(config, { url, opened, payments, confirmations: transport.description }));
    const broker = transport.transport;
    // Prepared only once the banner is out, so that a healthy service has always announced itself.
    const onError = (error: unknown) => log.error({ err: error }, 'database not ready; trying again');
    void schema.untilPrepared({ signal: stopping.signal, onError }).then((prepared) => {
      if (!prepared || stopping.signal.aborted) return;
      // Said only now: until the schema is prepared every route answers 503.
      console.log(tryLine(config, url));
      background = startBackgroundWork({
        database: opened.database,
        outboxListener: opened.outboxListener,
        transport: broker,
        provider: provider.client,
        webhooks: webhookSecret !== undefined,
        idempotency,
        sweepIntervalMs: config.sweepIntervalSeconds * 1000,
        log,
      });
    });
  } catch (error) {
    stopping.abort();
    await app?.close();
    await provider.close();
    await transport?.close();
    await opened.close();
    throw error;
  }
  const [server, broker] = [app, transport];
  stopOnSignal(async () => {
    // In-flight requests finish, then the background passes, before the database closes under them.
    stopping.abort();
    await server.close();
    await background?.stop();
    await broker.close();
    await provider.close();
    await opened.close();
  });
}

/** Generous: requests and a background pass finish first. A stop that hangs still ends, and says so. */
const STOP_CAP_MS = 30_000;

function stopOnSignal(closeAll: () => Promise<void>): void {
  let stopping = false;
  const stop = (signal: NodeJS.Signals) => {
    // Ctrl-C reaches the service twice, from the terminal and again through npm, and a supervisor may repeat
    // its signal: the stop under way goes on.
    if (stopping) return;
    stopping = true;
    console.log(`orders: ${signal}, stopping`);
    setTimeout(() => {
      console.error(`orders: not stopped within ${STOP_CAP_MS / 1000} s, exiting`);
      process.exit(1);
    }, STOP_CAP_MS).unref();
    closeAll().then(
      // The last line, so a supervisor's log shows the stop was clean.
      () => console.log('orders: stopped'),
      (error: unknown) => {
        console.error('orders: unclean stop', error);
        process.exitCode = 1;
      },
    );
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

interface Started {
  readonly url: string;
  readonly opened: OpenDatabase;
  readonly payments: string;
  readonly confirmations: string;
}

function banner(config: ServiceConfig, { url, opened, payments, confirmations }: Started): string {
  const tokens = config.demoTokens
    ? `demo tokens: ${[...config.tokens].map(([token, tenant]) => `${token} (${tenant})`).join(', ')}`
    : `${config.tokens.size} tokens from RETRYSAFE_TOKENS`;
  const secret =
    config.webhookSecret === undefined
      ? 'signed with a secret made for this run'
      : 'signed with PROVIDER_WEBHOOK_SECRET';
  const webhooks =
    config.webhookSecret === undefined && config.provider.kind === 'remote'
      ? 'not received: set PROVIDER_WEBHOOK_SECRET'
      : `${url}/webhooks/provider, ${secret}`;
  return [
    `orders service listening on ${url}`,
    `data: ${opened.description}`,
    `payments: ${payments}`,
    `provider webhooks: ${webhooks}`,
    `order confirmations: ${confirmations}`,
    tokens,
  ].join('\n');
}

function tryLine(config: ServiceConfig, url: string): string {
  const example = config.demoTokens ? [...config.tokens.keys()][0] : '<token>';
  return `ready; try: curl -X PUT ${url}/v1/carts/c1 -H 'Authorization: Bearer ${example}' -H 'Content-Type: application/json' -d '{"items":[{"sku":"WIDGET-1","qty":2}]}'`;
}

main().catch((error: unknown) => {
  console.error('orders: failed to start', error);
  process.exitCode = 1;
});
