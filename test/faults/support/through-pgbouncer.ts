import { spawn } from 'node:child_process';
import { createCluster } from './cluster.js';
import { startPgBouncer } from './pgbouncer.js';

/**
 * `tsx test/faults/support/through-pgbouncer.ts <command…>`: starts a cluster
 * of its own and a PgBouncer in transaction mode in front of it, runs the
 * command with TEST_DATABASE_URL pointing at the pooler and TEST_POOLER=transaction
 * (named statements off, node-postgres only), and exits with the command's code.
 */
async function main(): Promise<number> {
  const [command, ...args] = process.argv.slice(2);
  if (command === undefined) throw new Error('Give the command to run through PgBouncer.');
  const cluster = await createCluster('pooled');
  try {
    const pooler = await startPgBouncer({ host: '127.0.0.1', port: cluster.port });
    try {
      const child = spawn(command, args, {
        stdio: 'inherit',
        env: { ...process.env, TEST_DATABASE_URL: pooler.url(), TEST_POOLER: 'transaction' },
      });
      return await new Promise<number>((resolve) => child.once('exit', (code) => resolve(code ?? 1)));
    } finally {
      await pooler.close();
    }
  } finally {
    await cluster.dispose();
  }
}

main().then(
  (code) => (process.exitCode = code),
  (error: unknown) => {
    console.error(error);
    process.exitCode = 1;
  },
);
