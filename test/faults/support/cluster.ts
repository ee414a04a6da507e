import { execFile } from 'node:child_process';
import { appendFile, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { freePort } from '../../support/free-port.js';
import { waitFor } from '../../support/wait-for.js';
import { asPostgres, PG_BIN, serverDirectory } from './as-postgres.js';

const run = promisify(execFile);

/**
 * A PostgreSQL 15 cluster the test owns: its own data directory in a
 * temporary directory, its own port on 127.0.0.1, run as the server account.
 * Never the machine's own cluster.
 */
export interface Cluster {
  readonly name: string;
  readonly port: number;
  /** The data directory. */
  readonly dataDir: string;
  /** The server's log: what `pg_ctl -l` appends to. */
  readonly logFile: string;
  /** A URL for `database` on this cluster. */
  url(database?: string): string;
  start(): Promise<void>;
  /** `pg_ctl stop -m fast`. */
  stop(): Promise<void>;
  /** `pg_ctl restart -m fast`: every connection is cut, the server is back when it resolves. */
  restart(): Promise<void>;
  /** SIGKILL to the postmaster and every backend at once, as a lost machine. */
  kill(): Promise<void>;
  /** `pg_ctl promote`: a standby becomes a primary that takes writes. */
  promote(): Promise<void>;
  /** Runs one statement on a connection of its own and returns its rows. */
  query<Row>(sql: string, values?: unknown[], database?: string): Promise<Row[]>;
}

/** A primary and a streaming standby with synchronous replication: a commit is acknowledged once the standby has it. */
export interface ReplicatedPair {
  readonly primary: Cluster;
  readonly standby: Cluster;
  /** Stops both and removes their files. */
  dispose(): Promise<void>;
}

const COMMON_SETTINGS = [
  "listen_addresses = '127.0.0.1'",
  'max_connections = 200',
  // A process crash keeps the OS page cache: what the tests kill is processes, never the machine.
  'fsync = off',
  'full_page_writes = off',
  'wal_level = replica',
  'max_wal_senders = 5',
  'wal_keep_size = 64MB',
  'hot_standby = on',
  "log_min_messages = 'warning'",
];

/** Creates and starts a single cluster; `settings` are postgresql.conf lines added to the common ones. */
export async function createCluster(
  name: string,
  settings: readonly string[] = [],
): Promise<Cluster & { dispose(): Promise<void> }> {
  const root = await serverDirectory(`retrysafe-${name}-`);
  const cluster = await initialised(root, name, settings);
  await cluster.start();
  return { ...cluster, dispose: () => disposeAll(root, [cluster]) };
}

/** Creates a primary, takes a base backup of it for the standby and waits until the standby is its synchronous one. */
export async function createReplicatedPair(): Promise<ReplicatedPair> {
  const root = await serverDirectory('retrysafe-pair-');
  const primary = await initialised(root, 'primary');
  await primary.start();
  const standbyPort = await freePort();
  const standby = clusterAt(root, 'standby', standbyPort);
  await asPostgres(join(PG_BIN, 'pg_basebackup'), [
    '-d',
    `host=127.0.0.1 port=${primary.port} user=postgres application_name=standby`,
    '-D',
    standby.dataDir,
    '-R',
    '-X',
    'stream',
    '--no-sync',
  ]);
  await appendFile(
    join(standby.dataDir, 'postgresql.conf'),
    `\nport = ${standbyPort}\nunix_socket_directories = '${root}'\n`,
  );
  await standby.start();
  // Only the primary names a synchronous standby; ALTER SYSTEM after the backup keeps it out of the standby's copy.
  await primary.query("ALTER SYSTEM SET synchronous_standby_names = 'standby'");
  await primary.query("ALTER SYSTEM SET synchronous_commit = 'on'");
  await primary.query('SELECT pg_reload_conf()');
  await waitFor(
    async () =>
      (
        await primary.query<{ n: number }>(
          "SELECT count(*)::int AS n FROM pg_stat_replication WHERE sync_state = 'sync'",
        )
      )[0]?.n === 1,
    { what: 'the standby to stream synchronously' },
  );
  return { primary, standby, dispose: () => disposeAll(root, [primary, standby]) };
}

async function initialised(root: string, name: string, settings: readonly string[] = []): Promise<Cluster> {
  const cluster = clusterAt(root, name, await freePort());
  await asPostgres(join(PG_BIN, 'initdb'), [
    '-D',
    cluster.dataDir,
    '-U',
    'postgres',
    '--auth=trust',
    '--no-sync',
    '-E',
    'UTF8',
    '--locale=C',
  ]);
  await appendFile(
    join(cluster.dataDir, 'postgresql.conf'),
    `\n${[...COMMON_SETTINGS, ...settings].join('\n')}\nport = ${cluster.port}\nunix_socket_directories = '${root}'\n`,
  );
  return cluster;
}

function clusterAt(root: string, name: string, port: number): Cluster {
  const dataDir = join(root, name);
  const logFile = join(root, `${name}.log`);
  const pgCtl = (...args: string[]) => asPostgres(join(PG_BIN, 'pg_ctl'), ['-D', dataDir, ...args]);
  const url = (database = 'postgres') => `postgres://postgres@127.0.0.1:${port}/${database}`;
  return {
    name,
    port,
    dataDir,
    logFile,
    url,
    async start() {
      await pgCtl('-l', logFile, '-w', '-t', '60', 'start');
    },
    async stop() {
      await pgCtl('-m', 'fast', '-w', 'stop');
    },
    async restart() {
      await pgCtl('-l', logFile, '-m', 'fast', '-w', '-t', '60', 'restart');
    },
    async kill() {
      const postmaster = Number((await readFile(join(dataDir, 'postmaster.pid'), 'utf8')).split('\n')[0]);
      // Every backend is a session of its own: stopped, the postmaster forks no more while its children are listed.
      process.kill(postmaster, 'SIGSTOP');
      const children = (
        await run('ps', ['-o', 'pid=', '--ppid', String(postmaster)]).catch(() => ({ stdout: '' }))
      ).stdout
        .split('\n')
        .map(Number)
        .filter((pid) => pid > 0);
      for (const pid of [postmaster, ...children]) process.kill(pid, 'SIGKILL');
      await waitFor(() => Promise.resolve(!alive(postmaster) && children.every((pid) => !alive(pid))), {
        what: 'the killed server to be gone',
      });
    },
    async promote() {
      await pgCtl('-w', '-t', '60', 'promote');
    },
    async query<Row>(sql: string, values?: unknown[], database?: string) {
      const client = new pg.Client({ connectionString: url(database), connectionTimeoutMillis: 10_000 });
      client.on('error', () => {});
      await client.connect();
      try {
        return (await client.query(sql, values)).rows as Row[];
      } finally {
        await client.end();
      }
    },
  };
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function disposeAll(root: string, clusters: readonly Cluster[]): Promise<void> {
  for (const cluster of clusters) await cluster.stop().catch(() => cluster.kill().catch(() => undefined));
  await rm(root, { recursive: true, force: true });
}
