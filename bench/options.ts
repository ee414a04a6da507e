import { parseArgs } from 'node:util';
import { parseSizes } from './scale.js';

export interface BenchOptions {
  /** Any database on the PostgreSQL server; the run creates `retrysafe_bench` beside it. */
  readonly databaseUrl: string;
  /** The database the run recreates on that server. */
  readonly databaseName: string;
  readonly redisUrl: string;
  readonly rounds: number;
  /** Measured seconds per scenario, after the warm-up. */
  readonly seconds: number;
  readonly warmupSeconds: number;
  /** Concurrent HTTP connections, and ceiling workers. */
  readonly connections: number;
  readonly stormConnections: number;
  /** The server's pg Pool size, and the ceilings' database concurrency. */
  readonly poolSize: number;
  readonly replayKeys: number;
  readonly stormKeys: number;
  /** Scenario ids to run, and `physical` for PostgreSQL's cost per new key; all when empty. */
  readonly only: readonly string[];
  /** Transactions of each shape in the measurement of PostgreSQL's cost per new key. */
  readonly transactions: number;
  /** Profile B and C after the rounds. */
  readonly profile: boolean;
  /** `scale`: the record counts a new key's cost is measured at; the sweeps run at the largest. */
  readonly scaleSizes: readonly number[];
  /** `scale`: B's rate, per second, before and during a sweep pass. */
  readonly scaleRate: number;
  /** `scale`: the sweeper's `maxRecordsPerSecond` in every pass but the one that shows the sweep without it. */
  readonly scaleSweepLimit: number;
  /** `scale`: records kept through the fill-and-sweep cycles, and filled and swept in each. */
  readonly scaleLive: number;
  readonly scaleCycles: number;
}

export const USAGE = `npm run bench [-- options]

  --rounds N             rounds of every scenario; ratios are medians over rounds (3)
  --seconds S            measured seconds per scenario (3)
  --warmup S             warm-up seconds per scenario (1)
  --connections N        HTTP connections, and ceiling workers (32)
  --storm-connections N  HTTP connections in the storm scenarios (200)
  --pool N               the server's pg Pool size (8)
  --replay-keys N        completed keys replayed round-robin in C (500)
  --only A,B,C           run only these scenarios; \`physical\` names PostgreSQL's
                         cost per new key, measured on a cluster of the run's own;
                         \`scale\` the same at production sizes, with sweeps (never
                         part of a run without --only)
                         \`citus\` runs A and B on a Citus coordinator and two workers
                         of the run's own (only when named)
  --transactions N       transactions per shape in those measurements (3000)
  --scale-sizes A,B,C    record counts for \`scale\` (0,1000000,10000000)
  --scale-rate N         B's transactions per second beside a sweep pass (200)
  --scale-sweep-limit N  the sweeper's records per second at most (22000)
  --scale-live N         records kept through the fill-and-sweep cycles (200000)
  --scale-cycles N       fill-and-sweep cycles (10)
  --no-profile           skip the CPU profiles of B, C, Cm, E, A@200 and B@200

  BENCH_DATABASE_URL  PostgreSQL server (postgres://postgres@127.0.0.1:5432/postgres);
                      the run recreates the database retrysafe_bench on it
  BENCH_DATABASE_NAME another name for that database (retrysafe_bench)
  BENCH_REDIS_URL     Redis for the other libraries (redis://127.0.0.1:6379)`;

export function benchOptions(args: readonly string[], env: NodeJS.ProcessEnv): BenchOptions | 'help' {
  const { values } = parseArgs({
    args: [...args],
    options: {
      rounds: { type: 'string' },
      seconds: { type: 'string' },
      warmup: { type: 'string' },
      connections: { type: 'string' },
      'storm-connections': { type: 'string' },
      pool: { type: 'string' },
      'replay-keys': { type: 'string' },
      only: { type: 'string' },
      transactions: { type: 'string' },
      'no-profile': { type: 'boolean' },
      'scale-sizes': { type: 'string' },
      'scale-rate': { type: 'string' },
      'scale-sweep-limit': { type: 'string' },
      'scale-live': { type: 'string' },
      'scale-cycles': { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help === true) return 'help';
  const number = (value: string | undefined, fallback: number, name: string): number => {
    const parsed = value === undefined ? fallback : Number(value);
    if (!Number.isFinite(parsed) || parsed <= 0) throw new Error(`--${name} must be a positive number`);
    return parsed;
  };
  const databaseName = env.BENCH_DATABASE_NAME ?? 'retrysafe_bench';
  if (!/^[a-z_][a-z0-9_]{0,50}$/.test(databaseName))
    throw new Error('BENCH_DATABASE_NAME must be a plain lower-case identifier');
  return {
    databaseUrl: env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres',
    databaseName,
    redisUrl: env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379',
    rounds: Math.round(number(values.rounds, 3, 'rounds')),
    seconds: number(values.seconds, 3, 'seconds'),
    warmupSeconds: number(values.warmup, 1, 'warmup'),
    connections: Math.round(number(values.connections, 32, 'connections')),
    stormConnections: Math.round(number(values['storm-connections'], 200, 'storm-connections')),
    poolSize: Math.round(number(values.pool, 8, 'pool')),
    replayKeys: Math.round(number(values['replay-keys'], 500, 'replay-keys')),
    stormKeys: 20,
    only: values.only === undefined ? [] : values.only.split(',').map((id) => id.trim()),
    transactions: Math.round(number(values.transactions, 3000, 'transactions')),
    profile: values['no-profile'] !== true,
    scaleSizes: parseSizes(values['scale-sizes'] ?? '0,1000000,10000000'),
    scaleRate: number(values['scale-rate'], 200, 'scale-rate'),
    scaleSweepLimit: number(values['scale-sweep-limit'], 22_000, 'scale-sweep-limit'),
    scaleLive: Math.round(number(values['scale-live'], 200_000, 'scale-live')),
    scaleCycles: Math.round(number(values['scale-cycles'], 10, 'scale-cycles')),
  };
}
