import { execFile } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { asPostgres, PG_BIN } from '../test/faults/support/as-postgres.js';
import { COMPLETE_ATOMIC } from '../src/postgres/sql/complete-atomic.js';
import { completeValues, KEY_ROWS_TABLE, UNRULE_RECORDS } from './ceiling/statements.js';
import { clusterTicks, readProcStats } from './cluster-cpu.js';
import { freshDatabase, withClient } from './database.js';
import { measure, type RunContext } from './measure.js';
import type { Measurement } from './measurement.js';
import { NODE_SCENARIOS, PHYSICAL_SHAPES, type PhysicalRun, type PhysicalShape, type ShapeRound } from './physical.js';
import { pgbenchCount, PGBENCH_RECORDS } from './pgbench.js';
import { startPrivateCluster } from './private-cluster.js';
import { SCENARIOS } from './scenarios.js';
import { perTransaction, walParts, type WalParts } from './wal-parts.js';

const run = promisify(execFile);

const WARMUP_TRANSACTIONS = 500;
/** The Node servers' measured window at 200 requests per second. */
const NODE_SECONDS = 5;
/** How long the postmaster may take to wait for pgbench's backend once pgbench has exited. */
const EXIT_MS = 10_000;

/**
 * Starts a cluster of the bench's own, gives it the bench's schema, and in
 * each round runs every shape of `PHYSICAL_SHAPES` then A@200 and B@200 on it;
 * stops and removes it at the end.
 */
export async function measurePhysical(context: RunContext, transactions: number): Promise<PhysicalRun> {
  const { options } = context;
  const hz = Number((await run('getconf', ['CLK_TCK'])).stdout.trim());
  const cluster = await startPrivateCluster();
  try {
    const database = await freshDatabase(cluster.adminUrl, options.databaseName);
    const unruled = await freshDatabase(cluster.adminUrl, `${options.databaseName}_unruled`);
    // Its own backend lives through every window, idle between the samples it takes.
    const admin = new pg.Client({ connectionString: database.url });
    await admin.connect();
    try {
      await admin.query(KEY_ROWS_TABLE);
      await withClient(unruled.url, (client) => client.query(UNRULE_RECORDS));
      const [setting] = (await admin.query<{ data_directory: string }>('SHOW data_directory')).rows;
      if (setting === undefined) throw new Error('the cluster named no data directory');
      const walDirectory = join(setting.data_directory, 'pg_wal');
      const nodeContext: RunContext = { ...context, database, options: { ...options, seconds: NODE_SECONDS } };
      const shapes: ShapeRound[] = [];
      const node: Measurement[] = [];
      for (let round = 1; round <= options.rounds; round += 1) {
        for (const shape of PHYSICAL_SHAPES) {
          const target = shape.unruled === true ? unruled : database;
          await target.reset();
          await admin.query('TRUNCATE bench_keys');
          const measured = await measureShape(shape, round, {
            admin,
            url: target.url,
            postmaster: cluster.postmasterPid,
            walDirectory,
            hz,
            transactions,
          });
          console.log(
            `[r${round}] ${shape.id.padEnd(12)} ${Math.round(measured.cpuMicros)} µs PostgreSQL CPU, ${Math.round(measured.walBytes)} WAL bytes, ${Math.round(measured.tps)} tx/s`,
          );
          shapes.push(measured);
        }
        for (const id of Object.values(NODE_SCENARIOS)) {
          const scenario = SCENARIOS.find((s) => s.id === id);
          if (scenario === undefined) throw new Error(`no scenario ${id}`);
          const measured = await measure(scenario, round, nodeContext);
          console.log(
            `[r${round}] ${id.padEnd(12)} ${Math.round(measured.cpuMicros ?? Number.NaN)} µs Node CPU per request, ${Math.round(measured.throughput)} req/s`,
          );
          node.push(measured);
        }
      }
      return {
        serverVersion: database.serverVersion,
        settings: cluster.settings,
        transactions,
        warmupTransactions: WARMUP_TRANSACTIONS,
        nodeSeconds: NODE_SECONDS,
        shapes,
        node,
      };
    } finally {
      await admin.end();
      await database.close();
      await unruled.close();
    }
  } finally {
    await cluster.dispose();
  }
}

interface ShapeTarget {
  readonly admin: pg.Client;
  readonly url: string;
  readonly postmaster: number;
  /** The cluster's WAL, read by pg_waldump as the server account. */
  readonly walDirectory: string;
  /** Clock ticks per second, the unit of `/proc/<pid>/stat`'s times. */
  readonly hz: number;
  readonly transactions: number;
}

async function measureShape(shape: PhysicalShape, round: number, target: ShapeTarget): Promise<ShapeRound> {
  const { admin, postmaster } = target;
  if (shape.plan === 'read-record') await writeRecords(admin);
  // Pages first changed after a checkpoint are written whole to the WAL: the warm-up changes them, not the window.
  await admin.query('CHECKPOINT');
  const resident = new Set((await readProcStats()).filter((stat) => stat.ppid === postmaster).map((stat) => stat.pid));
  await pgbenchCount(shape.plan, target.url, WARMUP_TRANSACTIONS);
  await ticksOnceExited(postmaster, resident);
  const [start] = (await admin.query<WalSample>(WAL_SAMPLE)).rows;
  const before = await ticksOnceExited(postmaster, resident);
  const tps = await pgbenchCount(shape.plan, target.url, target.transactions);
  const after = await ticksOnceExited(postmaster, resident);
  // pg_stat_wal has the backend's counts once it has exited, as it has by now.
  const [end] = (await admin.query<WalSample>(WAL_SAMPLE)).rows;
  const [wal] = (
    await admin.query<{ bytes: number }>('SELECT pg_wal_lsn_diff($1, $2)::float8 AS bytes', [end?.lsn, start?.lsn])
  ).rows;
  const per = (count: number): number => count / target.transactions;
  const walBytes = wal?.bytes ?? Number.NaN;
  const parts = await windowParts(admin, target.walDirectory, start?.lsn, end?.lsn, walBytes);
  return {
    shape: shape.id,
    round,
    cpuMicros: per(((after - before) * 1e6) / target.hz),
    walBytes: per(walBytes),
    walParts: perTransaction(parts, target.transactions),
    walRecords: per((end?.records ?? Number.NaN) - (start?.records ?? Number.NaN)),
    fullPageImages: per((end?.fpi ?? Number.NaN) - (start?.fpi ?? Number.NaN)),
    tps,
  };
}

interface WalSample {
  readonly lsn: string;
  readonly records: number;
  readonly fpi: number;
}

/**
 * The insert position, not the write position (`pg_current_wal_lsn()`): it is where the next record begins, so
 * pg_waldump can start reading there. A write position can fall inside a record that spans two pages, and pg_waldump
 * then finds no record in a window of a few bytes (the replay shape's).
 */
const WAL_SAMPLE =
  'SELECT pg_current_wal_insert_lsn()::text AS lsn, wal_records::float8 AS records, wal_fpi::float8 AS fpi FROM pg_stat_wal';

/** What the WAL between `start` and `end` is made of (`wal-parts.ts`); nothing when nothing was written. */
async function windowParts(
  admin: ShapeTarget['admin'],
  walDirectory: string,
  start: string | undefined,
  end: string | undefined,
  bytes: number,
): Promise<WalParts> {
  if (bytes === 0) return walParts('', 0);
  if (start === undefined || end === undefined) throw new Error('no WAL position was read');
  return walParts(await waldumpStats(admin, walDirectory, start, end), bytes);
}

/** pg_waldump's `--stats=record` over the WAL from `start` to `end`, in `walDirectory`. */
export async function waldumpStats(
  admin: Pick<pg.Client, 'query'>,
  walDirectory: string,
  start: string,
  end: string,
): Promise<string> {
  // What was inserted last may still be in the server's WAL buffers: pg_waldump reads files. The WAL writer flushes
  // within wal_writer_delay (200 ms by default); a busy machine may take longer.
  for (const deadline = Date.now() + 10_000; ; await sleep(20)) {
    const [flush] = (
      await admin.query<{ flushed: boolean }>('SELECT pg_current_wal_flush_lsn() >= $1::pg_lsn AS flushed', [end])
    ).rows;
    if (flush?.flushed === true) break;
    if (Date.now() > deadline) throw new Error(`the WAL was not flushed to ${end} within 10 s`);
  }
  // Named, the window's segments give pg_waldump the segment size. Without them, pg_waldump reads the size from the
  // first file the directory lists, which may be a segment made ready ahead and still all zeros.
  const [segments] = (
    await admin.query<{ first: string; last: string }>(
      'SELECT pg_walfile_name($1::pg_lsn + 1) AS first, pg_walfile_name($2::pg_lsn) AS last',
      [start, end],
    )
  ).rows;
  return asPostgres(join(PG_BIN, 'pg_waldump'), [
    '--path',
    walDirectory,
    segments?.first ?? '',
    segments?.last ?? '',
    '--start',
    start,
    '--end',
    end,
    '--stats=record',
  ]);
}

/** The cluster's CPU ticks once every child that was not `resident` (pgbench's backend) has exited and been waited for. */
async function ticksOnceExited(postmaster: number, resident: ReadonlySet<number>): Promise<number> {
  for (const deadline = Date.now() + EXIT_MS; ; await sleep(20)) {
    const stats = await readProcStats();
    if (stats.every((stat) => stat.ppid !== postmaster || resident.has(stat.pid)))
      return clusterTicks(stats, postmaster);
    if (Date.now() > deadline) throw new Error("pgbench's backend has not exited");
  }
}

/** The finished records `read-record` replays, keys `1` … as the completion writes them. */
async function writeRecords(admin: pg.Client): Promise<void> {
  await admin.query('BEGIN');
  for (let key = 1; key <= PGBENCH_RECORDS.count; key += 1)
    await admin.query(COMPLETE_ATOMIC.text, completeValues(String(key)));
  await admin.query('COMMIT');
}
