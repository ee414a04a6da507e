import { open, stat } from 'node:fs/promises';
import { join } from 'node:path';
import pg from 'pg';
import { distribute, fromPg, migrate, portable } from '../src/postgres/index.js';
import { type CitusCluster, createCitusCluster } from '../test/support/citus-cluster.js';
import { type Placement, remoteCommands, spreadTenants } from './citus-counts.js';
import type { BenchDatabase, OrderCensus } from './database.js';
import { median } from './latency.js';
import { measure, type RunContext } from './measure.js';
import type { Measurement } from './measurement.js';
import { precreate } from './precreate.js';
import { type HttpScenario, SCENARIOS } from './scenarios.js';
import { startServer } from './server-process.js';

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

/** Tenants of the requests from each worker: requests name them in turn, so every other one goes to each worker. */
const TENANTS_PER_WORKER = 4;

/** Requests sent one at a time while the coordinator logs what it sends the workers, after as many to warm up. */
const COUNTED_REQUESTS = 200;

/** What one request of a scenario cost in round trips, counted over `COUNTED_REQUESTS`. */
export interface CitusHops {
  readonly scenario: string;
  readonly requests: number;
  /** The server's round trips to the coordinator, per request. */
  readonly clientTrips: number;
  /** Commands the coordinator sent each worker, per request, by the worker's port. */
  readonly workerTrips: ReadonlyMap<number, number>;
  /** The same commands by their first word, per request. */
  readonly kinds: ReadonlyMap<string, number>;
  /** Of the counted requests, `PREPARE TRANSACTION`s sent: a two-phase commit's parts. */
  readonly prepared: number;
}

/** What `--only citus` measured: every round of A and B on a coordinator and two workers, each server on the coordinator. */
export interface CitusRun {
  readonly serverVersion: string;
  readonly tenants: readonly string[];
  readonly measurements: readonly Measurement[];
  readonly hops: readonly CitusHops[];
}

/** Starts a Citus cluster of the run's own, runs A and B on it in rounds, and stops and removes it. */
export async function measureCitus(context: RunContext): Promise<CitusRun> {
  const cluster = await createCitusCluster();
  try {
    const database = await citusDatabase(cluster.coordinator.url());
    try {
      const tenants = spreadTenants(await placements(cluster), TENANTS_PER_WORKER);
      const measurements: Measurement[] = [];
      for (let round = 1; round <= context.options.rounds; round += 1) {
        for (const id of CITUS_SCENARIOS) {
          const scenario = scenarioOf(id);
          const measured = await measure(scenario, round, { ...context, database, tenants });
          console.log(
            `[r${round}] ${id}@citus ${Math.round(measured.throughput)}/s, ${measured.pgRoundTrips?.toFixed(2) ?? '?'} PG trips, ${measured.verdict?.text ?? ''}`,
          );
          measurements.push({ ...measured, scenario: `${id}@citus` });
        }
      }
      const hops: CitusHops[] = [];
      for (const id of CITUS_SCENARIOS) {
        const counted = await countHops(scenarioOf(id), { ...context, database, tenants }, cluster);
        console.log(`${id}@citus ${describeHops(counted)}`);
        hops.push(counted);
      }
      return { serverVersion: database.serverVersion, tenants, measurements, hops };
    } finally {
      await database.close();
    }
  } finally {
    await cluster.stop();
  }
}

function scenarioOf(id: string): HttpScenario {
  const scenario = SCENARIOS.find((s): s is HttpScenario => s.id === id && s.kind === 'http');
  if (scenario === undefined) throw new Error(`no HTTP scenario ${id}`);
  return scenario;
}

/** The worker of each of 64 candidate tenants' shards. */
async function placements(cluster: CitusCluster): Promise<Placement[]> {
  const candidates = Array.from({ length: 64 }, (_, at) => `tenant-${at}`);
  return cluster.coordinator.query<Placement>(
    `SELECT tenant, nodeport AS port FROM unnest($1::text[]) AS tenant
     JOIN pg_dist_shard_placement ON shardid = get_shard_id_for_distribution_column('retrysafe_operations', tenant)`,
    [candidates],
  );
}

/**
 * Starts the scenario's server on the coordinator with `citus.log_remote_commands`
 * on for its sessions only, and counts what `COUNTED_REQUESTS` new keys sent one
 * at a time cost: round trips to the coordinator, commands to each worker, and
 * any two-phase commit. Counted apart from the measured rounds: logging costs CPU.
 */
async function countHops(scenario: HttpScenario, context: RunContext, cluster: CitusCluster): Promise<CitusHops> {
  const { options, database, tenants } = context;
  await database.reset();
  const tag = `${context.runTag}-${scenario.id}-hops`;
  const logged = new URL(cluster.coordinator.url());
  logged.searchParams.set(
    'options',
    '-c citus.log_remote_commands=on -c log_min_messages=notice -c client_min_messages=warning',
  );
  const server = await startServer(scenario.app, {
    databaseUrl: logged.toString(),
    redisUrl: options.redisUrl,
    providerUrl: context.providerUrl,
    poolSize: options.poolSize,
    tag,
    logFile: join(context.logDir, `${scenario.id}-hops.log`),
  });
  try {
    await precreate(server.url, `${tag}-w-`, COUNTED_REQUESTS, true, 1, tenants);
    const before = await server.settledSample();
    const from = (await stat(cluster.coordinator.logFile)).size;
    await precreate(server.url, `${tag}-k-`, COUNTED_REQUESTS, true, 1, tenants);
    const after = await server.settledSample();
    const sent = remoteCommands(await readFrom(cluster.coordinator.logFile, from));
    const requests = after.requests - before.requests;
    return {
      scenario: `${scenario.id}@citus`,
      requests,
      clientTrips: (after.pgRoundTrips - before.pgRoundTrips) / requests,
      workerTrips: new Map([...sent.byWorker].map(([port, count]) => [port, count / requests])),
      kinds: new Map([...sent.byKind].map(([kind, count]) => [kind, count / requests])),
      prepared: sent.prepared,
    };
  } finally {
    await server.stop();
  }
}

/** The file from byte `from` on: what the server logged since. */
async function readFrom(file: string, from: number): Promise<string> {
  const handle = await open(file);
  try {
    const { size } = await handle.stat();
    const buffer = Buffer.alloc(size - from);
    await handle.read(buffer, 0, buffer.length, from);
    return buffer.toString('utf8');
  } finally {
    await handle.close();
  }
}

function describeHops(hops: CitusHops): string {
  const workers = [...hops.workerTrips].map(([port, trips]) => `${trips.toFixed(2)} to :${port}`).join(', ');
  const total = [...hops.workerTrips.values()].reduce((sum, trips) => sum + trips, 0);
  const kinds = [...hops.kinds].map(([kind, trips]) => `${trips.toFixed(2)} ${kind}`).join(', ');
  return `${hops.clientTrips.toFixed(2)} trips to the coordinator; ${total.toFixed(2)} from it to the workers (${workers}; ${kinds}); ${hops.prepared} PREPARE TRANSACTION (two-phase commit) in ${hops.requests} requests`;
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
  const hops = run.hops.map((h) => `| ${h.scenario} | ${describeHops(h)} |`);
  return `
## Citus: a coordinator and two workers (${run.serverVersion})

A and B with every server connected to the coordinator, new keys over ${run.tenants.length} tenants in turn (${run.tenants.join(', ')}), whose shards alternate between the two workers, ${rounds} rounds.

| scenario | round | req/s | p50 ms | p99 ms | PG round trips / request | µs server CPU / request | verdict |
| --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |
${rows.join('\n')}

Median B/A: throughput ${ratio.toFixed(2)}, server CPU per request ${cpu.toFixed(2)}; B's round trips per request (median) ${med('B@citus', (m) => m.pgRoundTrips).toFixed(2)}, A's ${med('A@citus', (m) => m.pgRoundTrips).toFixed(2)}.

Per request, counted apart from the rounds over ${COUNTED_REQUESTS} new keys sent one at a time, with \`citus.log_remote_commands\` on for the server's sessions (each command sent to a worker waits for its answer: a round trip):

| scenario | round trips |
| --- | --- |
${hops.join('\n')}
`;
}
