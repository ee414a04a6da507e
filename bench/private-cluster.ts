import { readFileSync, rmSync } from 'node:fs';
import { appendFile, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { endWithTheBench } from './child-process.js';
import { asPostgres, PG_BIN, serverDirectory } from '../test/faults/support/as-postgres.js';
import { freePort } from '../test/support/free-port.js';

/**
 * A PostgreSQL 15 cluster of the bench's own, for what is counted per process:
 * its data directory in a temporary directory owned by the server account,
 * its own port on 127.0.0.1, so that no other client's work is in its CPU
 * time or its WAL. Never the machine's own cluster.
 */
export interface PrivateCluster {
  /** The `postgres` database, to create others from. */
  readonly adminUrl: string;
  readonly postmasterPid: number;
  /** The settings it runs with besides PostgreSQL's defaults. */
  readonly settings: readonly string[];
  /** Stops it and removes its files. */
  dispose(): Promise<void>;
}

/**
 * PostgreSQL's defaults (fsync and full-page writes on) but for what would
 * land in a measured window at random: autovacuum, and a checkpoint by time
 * or WAL size (the first change of each page after one writes the whole page).
 */
const SETTINGS = ['autovacuum = off', 'checkpoint_timeout = 1h', 'max_wal_size = 8GB'];

/** `settings` replace the default ones, for a measurement whose server must look like production's. */
export async function startPrivateCluster(settings: readonly string[] = SETTINGS): Promise<PrivateCluster> {
  const root = await serverDirectory('retrysafe-bench-cluster-');
  const dataDir = join(root, 'data');
  const pgCtl = (...args: string[]): Promise<string> => asPostgres(join(PG_BIN, 'pg_ctl'), ['-D', dataDir, ...args]);
  try {
    const port = await freePort();
    await asPostgres(join(PG_BIN, 'initdb'), [
      '-D',
      dataDir,
      '-U',
      'postgres',
      '--auth=trust',
      '--no-sync',
      '-E',
      'UTF8',
      '--locale=C',
    ]);
    const conf = [
      ...settings,
      "listen_addresses = '127.0.0.1'",
      `port = ${port}`,
      `unix_socket_directories = '${root}'`,
      "log_min_messages = 'warning'",
    ];
    await appendFile(join(dataDir, 'postgresql.conf'), `\n${conf.join('\n')}\n`);
    await pgCtl('-l', join(root, 'server.log'), '-w', '-t', '60', 'start');
    const postmasterPid = Number((await readFile(join(dataDir, 'postmaster.pid'), 'utf8')).split('\n')[0]);
    // A bench that ends before `dispose` (a signal, a failed scenario) must not leave ten million records running.
    const forget = endWithTheBench(() => stopAtExit(postmasterPid, root));
    return {
      adminUrl: `postgres://postgres@127.0.0.1:${port}/postgres`,
      postmasterPid,
      settings,
      async dispose() {
        forget();
        await pgCtl('-m', 'fast', '-w', 'stop').catch(() => undefined);
        await rm(root, { recursive: true, force: true });
      },
    };
  } catch (error) {
    await pgCtl('-m', 'immediate', '-w', 'stop').catch(() => undefined);
    await rm(root, { recursive: true, force: true });
    throw error;
  }
}

/** Whether `pid` runs, as /proc tells it: a stopped postmaster whose parent has gone may stay a zombie. */
function running(pid: number): boolean {
  try {
    return !/^\d+ \(.*\) Z /.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}

/**
 * Synchronous, as the process exits: an immediate shutdown (SIGQUIT, what
 * `pg_ctl -m immediate` sends), then the files once the server has gone.
 */
function stopAtExit(postmasterPid: number, root: string): void {
  try {
    process.kill(postmasterPid, 'SIGQUIT');
  } catch {
    return;
  }
  const pause = new Int32Array(new SharedArrayBuffer(4));
  for (let tries = 0; tries < 200 && running(postmasterPid); tries += 1) Atomics.wait(pause, 0, 0, 50);
  rmSync(root, { recursive: true, force: true, maxRetries: 3 });
}
