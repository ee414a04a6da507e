import { join } from 'node:path';

/** Where the service keeps its data. */
export type DatabaseConfig =
  /**
   * A node-postgres pool on `url`, which may name several hosts
   * (`postgres://u@h1:5432,h2:5432/db`): the pool uses the one that takes writes.
   * `pooler: 'transaction'` when a transaction-mode pooler such as PgBouncer
   * stands between: statements are not prepared by name and the outbox relay
   * polls instead of listening.
   */
  | { readonly kind: 'postgres'; readonly url: string; readonly pooler: 'none' | 'transaction' }
  /** PGlite, persisted in a directory of its own. */
  | { readonly kind: 'pglite'; readonly dataDir: string };

/** The payment provider the payment routes charge through. */
export type ProviderConfig =
  | { readonly kind: 'remote'; readonly url: string }
  /** A local fake provider started with the service, keeping its charges in a file so they survive a crash. */
  | { readonly kind: 'local'; readonly stateFile: string };

/** Where `order.created` messages travel from the relay to the consumer that confirms orders. */
export type BrokerConfig =
  /** No broker: the relay hands each message to the consumer inside the service, through the inbox. */
  | { readonly kind: 'local' }
  | { readonly kind: 'amqp'; readonly url: string; readonly exchange: string; readonly queue: string }
  | { readonly kind: 'nats'; readonly url: string; readonly stream: string; readonly durable: string };

export interface ServiceConfig {
  readonly port: number;
  readonly host: string;
  readonly database: DatabaseConfig;
  readonly provider: ProviderConfig;
  readonly broker: BrokerConfig;
  /**
   * The `whsec_` secret the provider signs its webhooks with. Unset, the
   * service makes one at start for its local provider, and a remote
   * provider's webhooks are not received.
   */
  readonly webhookSecret: string | undefined;
  /** Bearer token → tenant. */
  readonly tokens: ReadonlyMap<string, string>;
  /** Whether `tokens` are the built-in demo tokens, which are safe to print. */
  readonly demoTokens: boolean;
  /** Tenant → seconds its stored responses are replayed; the others keep retrysafe's 24 hours. */
  readonly responseRetention: ReadonlyMap<string, number>;
  /** Seconds between two passes of the sweeper, which turns expired responses into tombstones. */
  readonly sweepIntervalSeconds: number;
}

export type ConfigResult =
  { readonly ok: true; readonly config: ServiceConfig } | { readonly ok: false; readonly errors: readonly string[] };

/** Each token is one user; `demo-a2` is a second user of `tenant-a`; `demo-c` is `tenant-c`'s, for trying a short retention. */
export const demoTokens: ReadonlyMap<string, string> = new Map([
  ['demo-a', 'tenant-a'],
  ['demo-a2', 'tenant-a'],
  ['demo-b', 'tenant-b'],
  ['demo-c', 'tenant-c'],
]);

/** Longest retention and sweep interval the service takes: retrysafe keeps a retention up to 100 years. */
const MAX_RETENTION_SECONDS = 100 * 365 * 24 * 3600;
const MAX_SWEEP_INTERVAL_SECONDS = 24 * 3600;

/** Reads the service's settings from the environment, reporting every bad one at once. */
export function loadConfig(env: Readonly<Record<string, string | undefined>>): ConfigResult {
  const errors: string[] = [];
  const port = parsePort(env.PORT, errors);
  const host = given(env.HOST) ?? '127.0.0.1';
  const url = given(env.DATABASE_URL);
  const dataDir = given(env.DATA_DIR) ?? '.data';
  const pooler = given(env.DATABASE_POOLER) ?? 'none';
  if (pooler !== 'none' && pooler !== 'transaction') errors.push('DATABASE_POOLER must be "none" or "transaction".');
  const database: DatabaseConfig =
    url === undefined
      ? { kind: 'pglite', dataDir }
      : { kind: 'postgres', url, pooler: pooler === 'transaction' ? 'transaction' : 'none' };
  if (url !== undefined && !/^postgres(ql)?:\/\//.test(url))
    errors.push('DATABASE_URL must be a postgres:// or postgresql:// URL.');
  const providerUrl = given(env.PROVIDER_URL);
  const provider: ProviderConfig =
    providerUrl === undefined
      ? { kind: 'local', stateFile: join(dataDir, 'provider.json') }
      : { kind: 'remote', url: providerUrl };
  if (providerUrl !== undefined && !/^https?:\/\//.test(providerUrl))
    errors.push('PROVIDER_URL must be an http:// or https:// URL.');
  const broker = parseBroker(env, errors);
  const webhookSecret = given(env.PROVIDER_WEBHOOK_SECRET);
  if (webhookSecret !== undefined && !/^whsec_[A-Za-z0-9+/]+={0,2}$/.test(webhookSecret)) {
    errors.push('PROVIDER_WEBHOOK_SECRET must be "whsec_" followed by base64.');
  }
  const tokensText = given(env.RETRYSAFE_TOKENS);
  const tokens = tokensText === undefined ? demoTokens : parseTokens(tokensText, errors);
  const retentionText = given(env.RESPONSE_RETENTION_SECONDS);
  const responseRetention = retentionText === undefined ? new Map() : parseRetention(retentionText, errors);
  const sweepIntervalSeconds = parseSeconds('SWEEP_INTERVAL_SECONDS', env.SWEEP_INTERVAL_SECONDS, 60, errors);
  if (errors.length > 0) return { ok: false, errors };
  return {
    ok: true,
    config: {
      port,
      host,
      database,
      provider,
      broker,
      webhookSecret,
      tokens,
      demoTokens: tokensText === undefined,
      responseRetention,
      sweepIntervalSeconds,
    },
  };
}

/** `tenant=seconds` pairs separated by commas. */
export function parseRetention(text: string, errors: string[]): ReadonlyMap<string, number> {
  const retention = new Map<string, number>();
  for (const { entry, name: tenant, value: seconds } of namedPairs('RESPONSE_RETENTION_SECONDS', text)) {
    if (tenant === '' || seconds === undefined) errors.push(`${entry} must look like tenant=seconds.`);
    else if (retention.has(tenant)) errors.push(`${entry} repeats a tenant.`);
    else if (!/^\d{1,10}$/.test(seconds) || Number(seconds) < 1 || Number(seconds) > MAX_RETENTION_SECONDS)
      errors.push(`${entry}: seconds must be an integer from 1 to ${MAX_RETENTION_SECONDS}, got "${seconds}".`);
    else retention.set(tenant, Number(seconds));
  }
  return retention;
}

/** The `name=value` entries of a comma-separated list, each named for its errors; `value` is undefined without `=`. */
function namedPairs(variable: string, text: string): { entry: string; name: string; value: string | undefined }[] {
  return text.split(',').map((pair, index) => {
    const separator = pair.indexOf('=');
    return {
      entry: `${variable} entry ${index + 1}`,
      name: pair.slice(0, Math.max(separator, 0)).trim(),
      value: separator < 0 ? undefined : pair.slice(separator + 1).trim(),
    };
  });
}

function parseSeconds(name: string, text: string | undefined, fallback: number, errors: string[]): number {
  const value = given(text);
  if (value === undefined) return fallback;
  if (!/^\d{1,5}$/.test(value) || Number(value) < 1 || Number(value) > MAX_SWEEP_INTERVAL_SECONDS) {
    errors.push(`${name} must be an integer from 1 to ${MAX_SWEEP_INTERVAL_SECONDS}, got "${value}".`);
    return fallback;
  }
  return Number(value);
}

function parseBroker(env: Readonly<Record<string, string | undefined>>, errors: string[]): BrokerConfig {
  const amqpUrl = given(env.AMQP_URL);
  const natsUrl = given(env.NATS_URL);
  if (amqpUrl !== undefined && natsUrl !== undefined) errors.push('Set AMQP_URL or NATS_URL, not both.');
  if (amqpUrl !== undefined) {
    if (!/^amqps?:\/\//.test(amqpUrl)) errors.push('AMQP_URL must be an amqp:// or amqps:// URL.');
    return {
      kind: 'amqp',
      url: amqpUrl,
      exchange: given(env.AMQP_EXCHANGE) ?? 'orders',
      queue: given(env.AMQP_QUEUE) ?? 'order-confirmations',
    };
  }
  if (natsUrl !== undefined) {
    if (!/^(nats|tls):\/\//.test(natsUrl)) errors.push('NATS_URL must be a nats:// or tls:// URL.');
    return {
      kind: 'nats',
      url: natsUrl,
      stream: given(env.NATS_STREAM) ?? 'ORDERS',
      durable: given(env.NATS_CONSUMER) ?? 'order-confirmations',
    };
  }
  return { kind: 'local' };
}

/** `token=tenant` pairs separated by commas. */
export function parseTokens(text: string, errors: string[]): ReadonlyMap<string, string> {
  const tokens = new Map<string, string>();
  for (const { entry, name: token, value: tenant } of namedPairs('RETRYSAFE_TOKENS', text)) {
    if (token === '' || tenant === undefined || tenant === '') {
      errors.push(`${entry} must look like token=tenant.`);
    } else if (!/^[\x21-\x7e]+$/.test(token)) {
      errors.push(`${entry}: a token is visible ASCII without spaces.`);
    } else if (tokens.has(token)) {
      errors.push(`${entry} repeats a token.`);
    } else {
      tokens.set(token, tenant);
    }
  }
  return tokens;
}

function parsePort(text: string | undefined, errors: string[]): number {
  const value = given(text);
  if (value === undefined) return 3000;
  if (!/^\d{1,5}$/.test(value) || Number(value) > 65_535) {
    errors.push(`PORT must be an integer from 0 to 65535, got "${value}".`);
    return 0;
  }
  return Number(value);
}

function given(value: string | undefined): string | undefined {
  const trimmed = value?.trim();
  return trimmed === undefined || trimmed === '' ? undefined : trimmed;
}
