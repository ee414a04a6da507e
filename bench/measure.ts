import { join } from 'node:path';
import { runCeiling } from './ceiling-process.js';
import type { BenchDatabase, OrderCensus } from './database.js';
import { keyStream } from './keys.js';
import { load, type LoadLength, type LoadResult } from './load.js';
import type { Measurement, Verdict } from './measurement.js';
import type { BenchOptions } from './options.js';
import { PGBENCH_CARTS, pgbenchCeiling } from './pgbench.js';
import { precreate } from './precreate.js';
import { tenantStream } from './request.js';
import type { RedisAdmin } from './redis.js';
import type { HttpScenario, Scenario } from './scenarios.js';
import { type ServerProcess, startServer } from './server-process.js';
import { openStorm } from './storm.js';
import type { ProcessSample } from './server/messages.js';

/** What every scenario of a run shares. */
export interface RunContext {
  readonly options: BenchOptions;
  readonly database: BenchDatabase;
  readonly redis: RedisAdmin;
  readonly providerUrl: string | undefined;
  /** Unique to the run; part of every key, so that runs and scenarios never share one. */
  readonly runTag: string;
  readonly logDir: string;
  /** The tenants each load of new keys names in turn; the requests' one tenant when absent. */
  readonly tenants?: readonly string[];
}

/** More new keys per second than the reference service answers here: each needs a cart made beforehand. */
const SERVICE_CARTS_PER_SECOND = 8000;

/**
 * Responses a held-rate scenario's server gives at full load before its
 * window. V8 compiles a route's functions after thousands of calls, on a
 * thread of the server's own, so CPU a request at 200 a second counted the
 * compiling: B used 2.1 million instructions a request after 2 000
 * requests and 0.8 million after 8 000 (valgrind), and side by side
 * B@200 − A@200 was 315 to 440 µs after 1 s at full load, 146 to 201 after 8 s.
 */
export const HELD_RATE_WARMUP_REQUESTS = 10_000;

/** How a scenario's server is warmed before its window: at full load, a held rate's for a count of requests. */
export function warmUpOf(scenario: Pick<HttpScenario, 'rate'>, warmupSeconds: number): LoadLength {
  return scenario.rate === undefined ? { seconds: warmupSeconds } : { requests: HELD_RATE_WARMUP_REQUESTS };
}

/** A name safe in keys and file names. */
const slug = (id: string): string => id.replace(/[^A-Za-z0-9]+/g, '_');

/** Measures one scenario; an HTTP scenario given `profileFile` is CPU-profiled during the measured window. */
export async function measure(
  scenario: Scenario,
  round: number,
  context: RunContext,
  profileFile?: string,
): Promise<Measurement> {
  await context.database.reset();
  const tag = `${context.runTag}-${slug(scenario.id)}-r${round}`;
  const logFile = join(context.logDir, `${slug(scenario.id)}-r${round}.log`);
  const { options } = context;
  switch (scenario.kind) {
    case 'http':
      return measureHttp(scenario, round, tag, logFile, context, profileFile);
    case 'ceiling': {
      const result = await runCeiling({
        plan: scenario.plan,
        unnamed: scenario.unnamed === true,
        databaseUrl: context.database.url,
        poolSize: options.poolSize,
        workers: options.connections,
        warmupSeconds: options.warmupSeconds,
        seconds: options.seconds,
        tag,
        logFile,
      });
      return {
        scenario: scenario.id,
        round,
        throughput: result.transactions / result.seconds,
        latency: result.latency,
        pgRoundTrips: result.roundTrips / result.transactions,
        cpuMicros: result.cpuMicros / result.transactions,
        peakRssBytes: result.maxRssBytes,
        errors: result.unclaimed,
      };
    }
    case 'pgbench': {
      const target = context.database;
      await target.reset();
      if (scenario.plan.startsWith('service-')) await target.createCarts(PGBENCH_CARTS.prefix, PGBENCH_CARTS.count);
      const result = await pgbenchCeiling(
        scenario.plan,
        target.url,
        options.poolSize,
        options.warmupSeconds,
        options.seconds,
      );
      return {
        scenario: scenario.id,
        round,
        throughput: result.transactions / result.seconds,
        latency: result.latency,
        errors: 0,
      };
    }
  }
}

/**
 * Starts the scenario's server, warms it up, then measures a fixed time of
 * load between two samples of the server taken while no request is in flight.
 */
async function measureHttp(
  scenario: HttpScenario,
  round: number,
  tag: string,
  logFile: string,
  context: RunContext,
  profileFile: string | undefined,
): Promise<Measurement> {
  const { options } = context;
  const server = await startServer(scenario.app, {
    databaseUrl: context.database.url,
    redisUrl: context.options.redisUrl,
    providerUrl: context.providerUrl,
    poolSize: options.poolSize,
    tag,
    logFile,
  });
  try {
    const measured = `${tag}-k-`;
    const { endpoint = 'orders' } = scenario;
    const warmUp = warmUpOf(scenario, options.warmupSeconds);
    if (endpoint === 'service') {
      await context.database.createCarts(
        `${tag}-w-`,
        'requests' in warmUp ? warmUp.requests : Math.ceil(SERVICE_CARTS_PER_SECOND * warmUp.seconds),
      );
      await context.database.createCarts(measured, Math.ceil(SERVICE_CARTS_PER_SECOND * options.seconds));
    }
    const connections = scenario.keys === 'storm' ? options.stormConnections : options.connections;
    // A replayed key must name the tenant it was created under: only new keys are spread.
    const nextTenant =
      context.tenants === undefined || scenario.keys !== 'fresh' ? undefined : tenantStream(context.tenants);
    // The storm's keys must be new when it starts, so every warm-up sends fresh keys.
    await load({
      url: server.url,
      endpoint,
      connections,
      ...warmUp,
      nextKey: keyStream('fresh', `${tag}-w-`, options.replayKeys),
      nextTenant,
    });
    if (scenario.keys === 'replay') {
      await precreate(server.url, measured, options.replayKeys);
      // Each key replayed once before the window: every library is measured in its steady state, a cache warmed.
      await precreate(server.url, measured, options.replayKeys, false);
    }
    const storm = scenario.keys === 'storm' ? await openStorm(server.url, connections) : undefined;
    const stormKeys = Array.from({ length: options.stormKeys }, (_, index) => `${measured}${index}`);
    const keyPlan = scenario.keys === 'replay' ? 'replay' : 'fresh';
    const window = (): Promise<LoadResult> =>
      storm === undefined
        ? load({
            url: server.url,
            endpoint,
            connections,
            seconds: options.seconds,
            rate: scenario.rate,
            nextKey: keyStream(keyPlan, measured, options.replayKeys),
            nextTenant,
          })
        : storm.run(stormKeys, options.seconds).finally(() => storm.close());
    const before = await server.settledSample();
    const result = await profiled(server, profileFile, window);
    const after = await server.settledSample();
    const census = await context.database.census(measured, endpoint);
    return {
      scenario: scenario.id,
      round,
      throughput: result.throughput,
      latency: result,
      ...perRequest(before, after),
      statuses: result.statuses,
      errors: result.errors,
      verdict: verdictOf(scenario, census, options),
    };
  } finally {
    await server.stop();
    await context.redis.forget(tag);
  }
}

async function profiled<T>(server: ServerProcess, profileFile: string | undefined, work: () => Promise<T>): Promise<T> {
  if (profileFile === undefined) return work();
  await server.profileStart();
  const result = await work();
  await server.profileStop(profileFile);
  return result;
}

function perRequest(
  before: ProcessSample,
  after: ProcessSample,
): Pick<Measurement, 'pgRoundTrips' | 'redisCommands' | 'cpuMicros' | 'peakRssBytes'> {
  const requests = Math.max(1, after.requests - before.requests);
  return {
    pgRoundTrips: (after.pgRoundTrips - before.pgRoundTrips) / requests,
    redisCommands: (after.redisCommands - before.redisCommands) / requests,
    cpuMicros: (after.cpuMicros - before.cpuMicros) / requests,
    peakRssBytes: after.maxRssBytes,
  };
}

/** Counts the orders each key created: never more than one, whatever the load. */
function verdictOf(scenario: HttpScenario, census: OrderCensus, options: BenchOptions): Verdict | undefined {
  if (scenario.guarantee === 'none') return undefined;
  const spread = `${census.rows} rows for ${census.keys} keys`;
  switch (scenario.keys) {
    case 'fresh':
      return census.duplicatedKeys === 0
        ? { ok: true, text: `${census.rows} rows, one per key` }
        : { ok: false, text: `${census.duplicatedKeys} keys ran more than once (${spread})` };
    case 'replay':
      return census.rows === options.replayKeys && census.maxPerKey === 1
        ? { ok: true, text: `${census.rows} rows for ${options.replayKeys} keys: no replay ran` }
        : { ok: false, text: `${spread}, up to ${census.maxPerKey} per key` };
    case 'storm':
      return census.rows === options.stormKeys && census.maxPerKey === 1
        ? { ok: true, text: `exactly ${census.rows} rows for ${options.stormKeys} keys` }
        : { ok: false, text: `${spread}, up to ${census.maxPerKey} per key` };
  }
}
