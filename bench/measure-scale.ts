import { execFile, fork } from 'node:child_process';
import { once } from 'node:events';
import { performance } from 'node:perf_hooks';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import pg from 'pg';
import { fromPg } from '../src/postgres/index.js';
import { maintenanceStore } from '../src/postgres/postgres-maintenance-store.js';
import { Sweeper } from '../src/retention/sweeper.js';
import type { SweepBatch } from '../src/store/maintenance-store.js';
import type { SqlDatabase } from '../src/store/sql-client.js';
// The statement observer the tests use: each statement, in a transaction or not, through one function.
import { observed } from '../test/support/observed-database.js';
import { supervise } from './child-process.js';
import { clusterTicks, readProcStats } from './cluster-cpu.js';
import { freshDatabase } from './database.js';
import { summariseLatencies } from './latency.js';
import { loadAverage } from './machine.js';
import { waldumpStats } from './measure-physical.js';
import type { BenchOptions } from './options.js';
import { startPrivateCluster } from './private-cluster.js';
import {
  type BatchPlan,
  type CycleSizes,
  type KeyCost,
  KEY_SHAPES,
  type KeyShape,
  type DueLayout,
  type ScaleRun,
  type PassSpec,
  sweepPasses,
  type SweepPass,
  walksIndex,
} from './scale.js';
import { type Expiry, fillRecords, paceKeys, runKeys } from './scale-load.js';
import { walImageBytes } from './wal-parts.js';

const run = promisify(execFile);

/**
 * A production-sized server: 1 GB of shared buffers; checkpoints by time as
 * PostgreSQL's default has them, and by WAL size past a fill's batch; WAL kept
 * long enough for pg_waldump to read a window across a checkpoint.
 */
const SETTINGS = ['shared_buffers = 1GB', 'checkpoint_timeout = 5min', 'max_wal_size = 4GB', 'wal_keep_size = 8GB'];
const WARMUP = 1000;
/** Not due before the run ends; due already, with the tombstone still kept; due, tombstone and all. */
const KEPT: Expiry = { responseSeconds: 86_400, tombstoneSeconds: 30 * 86_400 };
const RESPONSE_DUE: Expiry = { responseSeconds: -60, tombstoneSeconds: 30 * 86_400 };
const ALL_DUE: Expiry = { responseSeconds: -60, tombstoneSeconds: -30 };

let begun = performance.now();
/** A progress line, with the seconds since the measurement began. */
const log = (line: string): void => console.log(`[scale ${((performance.now() - begun) / 1000).toFixed(0)} s] ${line}`);

interface Cluster {
  readonly admin: pg.Client;
  readonly postmaster: number;
  readonly walDirectory: string;
  readonly hz: number;
}

/** `--only scale`: every figure of `ScaleRun`, on a cluster of the run's own, stopped and removed at the end. */
export async function measureScale(options: BenchOptions): Promise<ScaleRun> {
  const loadBefore = loadAverage();
  begun = performance.now();
  const hz = Number((await run('getconf', ['CLK_TCK'])).stdout.trim());
  const cluster = await startPrivateCluster(SETTINGS);
  try {
    const database = await freshDatabase(cluster.adminUrl, options.databaseName);
    const cycles = await freshDatabase(cluster.adminUrl, `${options.databaseName}_cycles`);
    const admin = new pg.Client({ connectionString: database.url });
    const load = new pg.Client({ connectionString: database.url });
    await Promise.all([admin.connect(), load.connect()]);
    try {
      const [setting] = (await admin.query<{ data_directory: string }>('SHOW data_directory')).rows;
      const target: Cluster = {
        admin,
        postmaster: cluster.postmasterPid,
        walDirectory: join(setting?.data_directory ?? '', 'pg_wal'),
        hz,
      };
      // First, on a database of their own: the fill of the largest table and its sweeps take longest.
      log('fill-and-sweep cycles');
      const cycled = await fillAndSweep(cycles.url, options.scaleLive, options.scaleCycles);
      const costs: KeyCost[] = [];
      for (const size of options.scaleSizes) {
        await fillTo(admin, size);
        for (const [shape] of KEY_SHAPES) {
          const cost = await measureKeys(target, load, shape, options.transactions, size);
          log(
            `${cost.records} records ${shape.padEnd(6)} ${Math.round(cost.cpuMicros)} µs PostgreSQL CPU, ${Math.round(cost.walBytes)} WAL bytes (${Math.round((100 * cost.imageBytes) / cost.walBytes)} % whole pages), ${Math.round(cost.tps)} tx/s`,
          );
          costs.push(cost);
        }
      }
      const sweeps: SweepPass[] = [];
      for (const spec of sweepPasses(options.scaleSweepLimit)) {
        const pass = await sweepWhileKeys(database.url, target, load, spec, options.scaleRate);
        log(
          `sweep ${spec.percentDue} % due, ${spec.layout}, limit ${spec.limit ?? 'none'}: ${pass.swept} in ${pass.seconds.toFixed(1)} s, B p99 ${pass.p99Without.toFixed(1)} → ${pass.p99With.toFixed(1)} ms (${pass.p99BesideBusyLoop.toFixed(1)} beside a busy loop of the pass's ${pass.passCores.toFixed(2)} cores), ${pass.failures.length} failed steps`,
        );
        sweeps.push(pass);
      }
      return {
        serverVersion: database.serverVersion,
        settings: cluster.settings,
        transactions: options.transactions,
        costs,
        sweeps,
        sweepRate: options.scaleRate,
        live: options.scaleLive,
        ...cycled,
        loadBefore,
        loadAfter: loadAverage(),
      };
    } finally {
      await Promise.all([admin.end(), load.end()]);
      await database.close();
      await cycles.close();
    }
  } finally {
    await cluster.dispose();
  }
}

const countRecords = async (admin: pg.Client): Promise<number> =>
  (await admin.query<{ n: number }>('SELECT count(*)::float8 AS n FROM retrysafe_operations')).rows[0]?.n ?? 0;

/** Records (and orders) up to `size`, then vacuumed and analyzed as autovacuum leaves a table this size. */
async function fillTo(admin: pg.Client, size: number): Promise<void> {
  const missing = size - (await countRecords(admin));
  if (missing <= 0) return;
  const started = performance.now();
  await fillRecords(admin, missing, KEPT, true);
  await admin.query('VACUUM ANALYZE retrysafe_operations, bench_orders');
  log(`filled to ${size} records in ${((performance.now() - started) / 1000).toFixed(0)} s`);
}

interface WalSample {
  readonly lsn: string;
  readonly ticks: number;
}

async function sample(cluster: Cluster): Promise<WalSample> {
  const [row] = (await cluster.admin.query<{ lsn: string }>('SELECT pg_current_wal_insert_lsn()::text AS lsn')).rows;
  return { lsn: row?.lsn ?? '', ticks: await ticks(cluster) };
}

/** The CPU time, in clock ticks, of all the cluster's processes so far. */
const ticks = async (cluster: Cluster): Promise<number> => clusterTicks(await readProcStats(), cluster.postmaster);

/** One shape's window: a checkpoint, warm-up, then `transactions` with a checkpoint halfway. */
async function measureKeys(
  cluster: Cluster,
  load: pg.Client,
  shape: KeyShape,
  transactions: number,
  records: number,
): Promise<KeyCost> {
  const { admin } = cluster;
  await admin.query(`ALTER SYSTEM SET wal_compression = '${shape === 'v4-lz4' ? 'lz4' : 'off'}'`);
  await admin.query('SELECT pg_reload_conf()');
  await admin.query('CHECKPOINT');
  await runKeys(load, shape, WARMUP);
  const start = await sample(cluster);
  const half = Math.floor(transactions / 2);
  const started = performance.now();
  await runKeys(load, shape, half);
  await admin.query('CHECKPOINT');
  await runKeys(load, shape, transactions - half);
  const seconds = (performance.now() - started) / 1000;
  const end = await sample(cluster);
  const [wal] = (
    await admin.query<{ bytes: number }>('SELECT pg_wal_lsn_diff($1, $2)::float8 AS bytes', [end.lsn, start.lsn])
  ).rows;
  const walBytes = wal?.bytes ?? Number.NaN;
  const stats = await waldumpStats(admin, cluster.walDirectory, start.lsn, end.lsn);
  return {
    records,
    shape,
    cpuMicros: ((end.ticks - start.ticks) * 1e6) / cluster.hz / transactions,
    walBytes: walBytes / transactions,
    imageBytes: walImageBytes(stats) / transactions,
    tps: transactions / seconds,
  };
}

/**
 * Makes the pass's share of the table's records due (its layout says which;
 * their responses expired a minute ago or more), vacuums, then runs B at
 * `rate` for as many transactions as ten seconds hold, then a whole
 * `Sweeper` pass at the pass's limit with B running beside it. Each batch
 * statement is explained the first time the pass sends it, just before it
 * runs. Last, B for ten seconds more beside a busy loop that takes the CPU
 * the pass added (the cluster's and this process's, over B's alone): what
 * that much CPU costs B's latency on this machine, whoever takes it.
 */
async function sweepWhileKeys(
  url: string,
  cluster: Cluster,
  load: pg.Client,
  spec: PassSpec,
  rate: number,
): Promise<SweepPass> {
  const { admin } = cluster;
  const { percentDue: percent, layout, limit } = spec;
  const records = await countRecords(admin);
  if (percent > 0) await makeDue(admin, Math.round((records * percent) / 100), layout);
  // The UPDATE that made them due left a dead version of each behind, which a service's table has not:
  // gone before the pass, as autovacuum would take them, rather than during it.
  await admin.query('VACUUM ANALYZE retrysafe_operations');
  const alone = await cores(cluster, () => paceKeys(load, rate, rate * 10));
  const pool = new pg.Pool({ connectionString: url, max: 2 });
  const plans: BatchPlan[] = [];
  try {
    const store = maintenanceStore(explaining(fromPg(pool), pool, plans));
    const started = performance.now();
    const pass = new Sweeper({ store, maxRecordsPerSecond: limit ?? Infinity }).runOnce();
    // B runs a second at least: a pass with nothing to do ends sooner.
    const ended = pass.then(() => performance.now());
    const during = await cores(cluster, () => paceKeys(load, rate, rate, pass));
    const report = await pass;
    const passCores = Math.max(0, during.cores - alone.cores);
    const beside = await besideBusyLoop(passCores, () => paceKeys(load, rate, rate * 10));
    return {
      ...spec,
      records,
      swept: report.tombstoned + report.deleted,
      seconds: ((await ended) - started) / 1000,
      failures: report.failed.map((f) => `${f.step}: ${f.error instanceof Error ? f.error.message : String(f.error)}`),
      plans,
      p99Without: summariseLatencies(alone.result).p99,
      p99With: summariseLatencies(during.result).p99,
      passCores,
      p99BesideBusyLoop: summariseLatencies(beside).p99,
    };
  } finally {
    await pool.end();
  }
}

/** `work`'s result and the cores the cluster and this process kept busy while it ran, on average. */
async function cores<T>(cluster: Cluster, work: () => Promise<T>): Promise<{ result: T; cores: number }> {
  const [startTicks, startOwn, started] = [await ticks(cluster), process.cpuUsage(), performance.now()];
  const result = await work();
  const own = process.cpuUsage(startOwn);
  const seconds = (performance.now() - started) / 1000;
  const cpuSeconds = ((await ticks(cluster)) - startTicks) / cluster.hz + (own.user + own.system) / 1e6;
  return { result, cores: cpuSeconds / seconds };
}

/** `work` run beside busy loops that together take `taken` cores of CPU, one process for each core or part of one. */
async function besideBusyLoop<T>(taken: number, work: () => Promise<T>): Promise<T> {
  const loops = Array.from({ length: Math.ceil(taken) }, () =>
    supervise(
      fork(fileURLToPath(new URL('busy-loop.ts', import.meta.url)), [String(taken / Math.ceil(taken))], {
        execArgv: ['--import', 'tsx'],
        stdio: 'ignore',
      }),
    ),
  );
  try {
    await Promise.all(loops.map((loop) => once(loop, 'spawn')));
    return await work();
  } finally {
    await Promise.all(
      loops.map(async (loop) => {
        const exited = once(loop, 'exit');
        loop.kill();
        await exited;
      }),
    );
  }
}

/**
 * Moves the response expiry of `count` completed records not yet due into the
 * past. `oldest`: those that expire first, keeping their order and their
 * distance apart, as a day later they come due. `scattered`: picked at random,
 * all given the same expiry.
 */
async function makeDue(admin: pg.Client, count: number, layout: DueLayout): Promise<void> {
  const kept = `state = 'completed' AND response_expires_at > now()`;
  if (layout === 'oldest') {
    await admin.query(
      `UPDATE retrysafe_operations
       SET response_expires_at = response_expires_at - (c.at - now()) - interval '1 minute'
       FROM (SELECT response_expires_at AS at FROM retrysafe_operations WHERE ${kept}
             ORDER BY response_expires_at OFFSET $1 - 1 LIMIT 1) AS c
       WHERE ${kept} AND response_expires_at <= c.at`,
      [count],
    );
    return;
  }
  const { rows } = await admin.query<{ n: number }>(
    `SELECT count(*)::float8 AS n FROM retrysafe_operations WHERE ${kept}`,
  );
  await admin.query(
    `UPDATE retrysafe_operations SET response_expires_at = now() - interval '1 minute' WHERE ${kept} AND random() < $1`,
    [Math.min(1, count / (rows[0]?.n ?? 1))],
  );
}

/** `database`, explaining each statement on the record table the first time it is sent, into `plans`. */
function explaining<Tx>(database: SqlDatabase<Tx>, pool: pg.Pool, plans: BatchPlan[]): SqlDatabase<Tx> {
  const seen = new Set<string>();
  return observed(database, async (text, values, send) => {
    const sql = typeof text === 'string' ? text : text.text;
    if (sql.includes('retrysafe_operations') && !seen.has(sql)) {
      seen.add(sql);
      const { rows } = await pool.query<{ 'QUERY PLAN': string }>(`EXPLAIN (COSTS OFF) ${sql}`, [...values]);
      const plan = rows.map((row) => row['QUERY PLAN']).join('\n');
      plans.push({ statement: firstWords(sql), plan, walksIndex: walksIndex(plan) });
      log(`${firstWords(sql)} ${walksIndex(plan) ? 'walks an index' : 'READS THE TABLE'}`);
    }
    return send();
  });
}

const firstWords = (sql: string): string => {
  const change = /\b(UPDATE|DELETE FROM) retrysafe_operations\b/.exec(sql)?.[0];
  return change === undefined ? (sql.trim().split('\n')[0] ?? '') : `… ${change} …`;
};

/**
 * `live` records that stay, then `cycles` times: as many more, due, filled,
 * tombstoned and deleted through the store's own steps, and vacuumed; the
 * record tables' sizes after each. Before that, on the same database, the
 * bytes a record and a tombstone take.
 */
async function fillAndSweep(
  url: string,
  live: number,
  cycles: number,
): Promise<Pick<ScaleRun, 'cycles' | 'tombstoneWal' | 'deleteWal' | 'bytesPerRecord' | 'bytesPerTombstone'>> {
  const pool = new pg.Pool({ connectionString: url, max: 1 });
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const store = maintenanceStore(fromPg(pool));
    await fillRecords(client, live, RESPONSE_DUE, false);
    await client.query('VACUUM ANALYZE');
    const bytesPerRecord = (await sizes(client)).total / live;
    await drain(client, (n, from) => store.tombstoneExpired(n, from));
    // The tombstones in pages of their own, as a table of tombstones keeps them.
    await client.query('VACUUM FULL');
    const bytesPerTombstone = (await sizes(client)).total / live;
    log(`${Math.round(bytesPerRecord)} bytes per record, ${Math.round(bytesPerTombstone)} per tombstone`);
    await client.query('TRUNCATE retrysafe_operations, retrysafe_steps');
    await fillRecords(client, live, KEPT, false);
    const measured: CycleSizes[] = [];
    const tombstoneWal: number[] = [];
    const deleteWal: number[] = [];
    // VACUUM hands an index page it emptied to new entries only once a transaction newer than the page's
    // deletion has committed. A service's database commits them all the time; without any, each cycle's
    // emptied pages waited for the next cycle's VACUUM and the indexes held two cycles' worth.
    const traffic = otherTransactions(url);
    try {
      for (let cycle = 1; cycle <= cycles; cycle += 1) {
        await fillRecords(client, live, ALL_DUE, false);
        // A record is a day old when its response expires: many checkpoints later, so its pages are written whole again.
        await client.query('CHECKPOINT');
        tombstoneWal.push(await drain(client, (n, from) => store.tombstoneExpired(n, from)));
        deleteWal.push(await drain(client, (n, from) => store.deleteExpiredTombstones(n, from)));
        // What autovacuum does after a sweep this size (migration 0017 starts one at 2 % dead rows).
        await client.query('VACUUM retrysafe_operations');
        const { heap, index } = await sizes(client);
        measured.push({ cycle, heapBytes: heap, indexBytes: index });
        log(
          `cycle ${cycle}: heap ${heap}, indexes ${index} bytes (${await eachIndex(client)}); WAL ${Math.round(tombstoneWal.at(-1) ?? 0)} per tombstone, ${Math.round(deleteWal.at(-1) ?? 0)} per delete`,
        );
      }
    } finally {
      await traffic.stop();
    }
    return { cycles: measured, tombstoneWal, deleteWal, bytesPerRecord, bytesPerTombstone };
  } finally {
    await client.end();
    await pool.end();
  }
}

/** A connection of its own committing transactions that take an ID, one after another, until stopped. */
function otherTransactions(url: string): { stop(): Promise<void> } {
  const client = new pg.Client({ connectionString: url });
  let stopped = false;
  const running = (async () => {
    await client.connect();
    try {
      while (!stopped) await client.query('SELECT txid_current()');
    } finally {
      await client.end();
    }
  })();
  return {
    stop: async () => {
      stopped = true;
      await running;
    },
  };
}

/** One step of a pass in batches of 500, as the sweeper drains it; resolves to its WAL bytes per row changed. */
async function drain(client: pg.Client, step: (limit: number, from?: string) => Promise<SweepBatch>): Promise<number> {
  const lsn = async () =>
    (await client.query<{ lsn: string }>('SELECT pg_current_wal_insert_lsn()::text AS lsn')).rows[0]?.lsn;
  const start = await lsn();
  let changed = 0;
  let from: string | undefined;
  for (;;) {
    const batch = await step(500, from);
    changed += batch.changed;
    from = batch.resume ?? from;
    if (batch.changed < 500) break;
  }
  const [wal] = (
    await client.query<{ bytes: number }>('SELECT pg_wal_lsn_diff($1, $2)::float8 AS bytes', [await lsn(), start])
  ).rows;
  return (wal?.bytes ?? Number.NaN) / changed;
}

/** Each index of the record table with its size in bytes, for the log: which one grows. */
async function eachIndex(client: pg.Client): Promise<string> {
  const { rows } = await client.query<{ name: string; bytes: number }>(
    `SELECT indexrelid::regclass::text AS name, pg_relation_size(indexrelid)::float8 AS bytes
     FROM pg_index WHERE indrelid = 'retrysafe_operations'::regclass ORDER BY 1`,
  );
  return rows.map(({ name, bytes }) => `${name.replace(/^retrysafe_operations_?/, '') || 'table'} ${bytes}`).join(', ');
}

/** The tables and indexes of retrysafe's schema, wherever its design keeps records and tombstones. */
async function sizes(client: pg.Client): Promise<{ heap: number; index: number; total: number }> {
  const [row] = (
    await client.query<{ heap: number; index: number }>(
      `SELECT sum(pg_table_size(c.oid))::float8 AS heap, sum(pg_indexes_size(c.oid))::float8 AS index
       FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
       WHERE n.nspname = current_schema() AND c.relkind = 'r' AND c.relname LIKE 'retrysafe\\_%'`,
    )
  ).rows;
  const heap = row?.heap ?? Number.NaN;
  const index = row?.index ?? Number.NaN;
  return { heap, index, total: heap + index };
}
