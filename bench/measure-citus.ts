import pg from 'pg';
import { distribute, fromPg, migrate, portable } from '../src/postgres/index.js';
import { createCitusCluster } from '../test/support/citus-cluster.js';
import type { BenchDatabase, OrderCensus } from './database.js';
import { median } from './latency.js';
import { measure, type RunContext } from './measure.js';
import type { Measurement } from './measurement.js';
import { SCENARIOS } from './scenarios.js';

/** The scenarios measured on Citus, in the order a round runs them: the bare endpoint, then retrysafe atomic. */
const CITUS_SCENARIOS = ['A', 'B'] as const;

/**
 * The bench's orders on Citus, distributed by tenant: the primary key leads with the tenant, as a distributed
 * table's must. `distribute` then colocates retrysafe's records with them, so that an order and its record commit
 * on one worker.
 */
const CITUS_ORDERS = [
  `CREATE TABLE bench_orders (
    id bigserial, tenant text NOT NULL, sku text NOT NULL, quantity integer NOT NULL, idem_key text,
    created_at timestamptz NOT NULL DEFAULT now(), PRIMARY KEY (tenant, id))`,
  "SELECT create_distributed_table('bench_orders', 'tenant')",
];

/** What `--only citus` measured: every round of A and B on a coordinator and two workers, each server on the coordinator. */
export interface CitusRun {
  readonly serverVersion: string;
  readonly measurements: readonly Measurement[];
}

/** Starts a Citus cluster of the run's own, runs A and B on it in rounds, and stops and removes it. */
export async function measureCitus(context: RunContext): Promise<CitusRun> {
  const cluster = await createCitusCluster();
  try {
    const database = await citusDatabase(cluster.coordinator.url());
    try {
      const measurements: Measurement[] = [];
      for (let round = 1; round <= context.options.rounds; round += 1) {
        for (const id of CITUS_SCENARIOS) {
          const scenario = SCENARIOS.find((s) => s.id === id);
          if (scenario === undefined) throw new Error(`no scenario ${id}`);
          const measured = await measure(scenario, round, { ...context, database });
          console.log(
            `[r${round}] ${id}@citus ${Math.round(measured.throughput)}/s, ${measured.pgRoundTrips?.toFixed(2) ?? '?'} PG trips, ${measured.verdict?.text ?? ''}`,
          );
          measurements.push({ ...measured, scenario: `${id}@citus` });
        }
      }
      return { serverVersion: database.serverVersion, measurements };
    } finally {
      await database.close();
    }
  } finally {
    await cluster.stop();
  }
}

/** The coordinator's database, migrated, with the bench's orders, as the scenarios use it. */
async function citusDatabase(url: string): Promise<BenchDatabase> {
  const pool = new pg.Pool({ connectionString: url, max: 2 });
  pool.on('error', () => {});
  await migrate(portable(fromPg(pool)));
  for (const statement of CITUS_ORDERS) await pool.query(statement);
  await distribute(fromPg(pool), { colocateWith: 'bench_orders' });
  const [version] = (
    await pool.query<{ server_version: string; citus: string }>(
      "SELECT current_setting('server_version') AS server_version, (SELECT extversion FROM pg_extension WHERE extname = 'citus') AS citus",
    )
  ).rows;
  return {
    url,
    serverVersion: `${version?.server_version ?? 'unknown'}, Citus ${version?.citus ?? 'unknown'}`,
    async reset() {
      await pool.query('TRUNCATE bench_orders, retrysafe_steps, retrysafe_operations');
    },
    async census(keyPrefix) {
      const { rows } = await pool.query<OrderCensus>(
        `SELECT coalesce(sum(n), 0)::int AS rows, count(*)::int AS keys,
                count(*) FILTER (WHERE n > 1)::int AS "duplicatedKeys", coalesce(max(n), 0)::int AS "maxPerKey"
         FROM (SELECT count(*) AS n FROM bench_orders WHERE left(idem_key, length($1)) = $1 GROUP BY idem_key) AS per_key`,
        [keyPrefix],
      );
      const [census] = rows;
      if (census === undefined) throw new Error('census returned no row');
      return census;
    },
    createCarts() {
      return Promise.reject(new Error('the reference service is not measured on Citus'));
    },
    updateStats: () => Promise.resolve([]),
    close: () => pool.end(),
  };
}

/** The rounds of A and B on Citus, and the medians' ratios, as a section of the report. */
export function renderCitus(run: CitusRun, rounds: number): string {
  const of = (id: string) => run.measurements.filter((m) => m.scenario === id);
  const med = (id: string, pick: (m: Measurement) => number | undefined) =>
    median(of(id).flatMap((m) => (pick(m) === undefined ? [] : [pick(m) ?? 0])));
  const rows = run.measurements.map(
    (m) =>
      `| ${m.scenario} | ${m.round} | ${Math.round(m.throughput)} | ${m.latency.p50.toFixed(1)} | ${m.latency.p99.toFixed(1)} | ${m.pgRoundTrips?.toFixed(2) ?? ''} | ${m.cpuMicros === undefined ? '' : Math.round(m.cpuMicros)} | ${m.verdict?.text ?? ''} |`,
  );
  const ratio = med('B@citus', (m) => m.throughput) / med('A@citus', (m) => m.throughput);
  const cpu = med('B@citus', (m) => m.cpuMicros) / med('A@citus', (m) => m.cpuMicros);
  return `
## Citus: a coordinator and two workers (${run.serverVersion})

A and B with every server connected to the coordinator, one tenant (so one worker holds its shards), ${rounds} rounds.

| scenario | round | req/s | p50 ms | p99 ms | PG round trips / request | µs server CPU / request | verdict |
| --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |
${rows.join('\n')}

Median B/A: throughput ${ratio.toFixed(2)}, server CPU per request ${cpu.toFixed(2)}; B's round trips per request (median) ${med('B@citus', (m) => m.pgRoundTrips).toFixed(2)}, A's ${med('A@citus', (m) => m.pgRoundTrips).toFixed(2)}.
`;
}
