import { type ChildProcess, spawn } from 'node:child_process';
import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import pg from 'pg';
import { freePort } from '../../support/free-port.js';
import { serverAccount, serverDirectory } from './as-postgres.js';
import { waitFor } from '../../support/wait-for.js';

/** A PgBouncer of the test's own, in transaction pooling mode, in front of one PostgreSQL server. */
export interface Pooler {
  readonly port: number;
  /** A URL for `database` through the pooler. */
  url(database?: string): string;
  close(): Promise<void>;
}

/** Starts Debian's `pgbouncer` with an ini file of its own; every database name is passed through to `target`. */
export async function startPgBouncer(target: { readonly host: string; readonly port: number }): Promise<Pooler> {
  const directory = await serverDirectory('retrysafe-pgbouncer-');
  const port = await freePort();
  const ini = join(directory, 'pgbouncer.ini');
  await writeFile(join(directory, 'users.txt'), '"postgres" ""\n');
  await writeFile(
    ini,
    [
      '[databases]',
      `* = host=${target.host} port=${target.port}`,
      '[pgbouncer]',
      'listen_addr = 127.0.0.1',
      `listen_port = ${port}`,
      "unix_socket_dir = ''",
      'auth_type = trust',
      `auth_file = ${join(directory, 'users.txt')}`,
      'pool_mode = transaction',
      'max_client_conn = 1000',
      'default_pool_size = 30',
      // Server connections are let go soon after use, so a test's DROP DATABASE does not wait for them.
      'server_idle_timeout = 2',
      'server_lifetime = 60',
      'ignore_startup_parameters = extra_float_digits,options',
      `logfile = ${join(directory, 'pgbouncer.log')}`,
      '',
    ].join('\n'),
  );
  const { uid, gid } = await serverAccount();
  const child: ChildProcess = spawn('pgbouncer', [ini], { stdio: 'ignore', uid, gid });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const url = (database = 'postgres') => `postgres://postgres@127.0.0.1:${port}/${database}`;
  await waitFor(
    async () => {
      const client = new pg.Client({ connectionString: url() });
      client.on('error', () => {});
      await client.connect();
      await client.end();
      return true;
    },
    { what: 'PgBouncer to accept connections', limitMs: 30_000 },
  );
  return {
    port,
    url,
    async close() {
      if (child.exitCode === null) child.kill('SIGTERM');
      await exited;
      await rm(directory, { recursive: true, force: true });
    },
  };
}
