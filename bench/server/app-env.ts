/** What a server child is told through its environment. */
export interface AppEnv {
  readonly databaseUrl: string;
  readonly redisUrl: string;
  /** The fake payment provider, for the leased scenarios. */
  readonly providerUrl: string | undefined;
  readonly poolSize: number;
  /** Part of every key and key prefix this run writes, so its Redis keys can be found and deleted. */
  readonly tag: string;
}

export function appEnv(env: NodeJS.ProcessEnv = process.env): AppEnv {
  const required = (name: string): string => {
    const value = env[name];
    if (value === undefined || value === '') throw new Error(`${name} is required`);
    return value;
  };
  return {
    databaseUrl: required('BENCH_APP_DATABASE_URL'),
    redisUrl: required('BENCH_APP_REDIS_URL'),
    providerUrl: env.BENCH_APP_PROVIDER_URL === '' ? undefined : env.BENCH_APP_PROVIDER_URL,
    poolSize: Number(required('BENCH_APP_POOL_SIZE')),
    tag: required('BENCH_APP_TAG'),
  };
}

/** The environment a server child reads for `app`, as the one-server tools start it: a pool of 8, no provider. */
export function appEnvFor(app: string, databaseUrl: string, tag: string): Record<string, string> {
  return {
    BENCH_APP: app,
    BENCH_APP_DATABASE_URL: databaseUrl,
    BENCH_APP_REDIS_URL: process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379',
    BENCH_APP_PROVIDER_URL: '',
    BENCH_APP_POOL_SIZE: '8',
    BENCH_APP_TAG: tag,
  };
}
