import { loadPeer } from './load-peer.js';

/** The members of an `@redis/client` 6 client that Powertools' cache layer calls; each sends one command. */
export interface RedisClient {
  get(key: string): Promise<string | null>;
  set(key: string, value: string, options?: Record<string, unknown>): Promise<string | null>;
  del(keys: string[]): Promise<number>;
  connect(): Promise<RedisClient>;
  close(): Promise<void>;
}

export interface IdempotencyConfig {
  registerLambdaContext(context: { getRemainingTimeInMillis(): number }): void;
}

interface IdempotencyModule {
  IdempotencyConfig: new (options: {
    eventKeyJmesPath?: string;
    payloadValidationJmesPath?: string;
    throwOnNoIdempotencyKey?: boolean;
  }) => IdempotencyConfig;
  makeIdempotent<Args extends unknown[], Result>(
    fn: (...args: Args) => Promise<Result>,
    options: { persistenceStore: unknown; config: IdempotencyConfig; keyPrefix?: string },
  ): (...args: Args) => Promise<Result>;
}

interface CacheModule {
  CachePersistenceLayer: new (options: { client: RedisClient }) => unknown;
}

interface RedisModule {
  createClient(options: { url: string }): RedisClient;
}

export interface PowertoolsPeer {
  readonly idempotency: IdempotencyModule;
  readonly cache: CacheModule;
  readonly redis: RedisModule;
}

export async function loadPowertools(): Promise<PowertoolsPeer> {
  return {
    idempotency: await loadPeer<IdempotencyModule>('@aws-lambda-powertools/idempotency'),
    cache: await loadPeer<CacheModule>('@aws-lambda-powertools/idempotency/cache'),
    redis: await loadPeer<RedisModule>('@redis/client'),
  };
}
