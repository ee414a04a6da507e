/**
 * A bench-like parent. SUPERVISED=provider: starts the bench's payment provider and
 * prints its URL. SUPERVISED=cluster: starts a private PostgreSQL cluster and
 * prints its postmaster's pid. Otherwise: starts, under the bench's supervision, a child
 * that would run for ever, and prints its pid. SIGUSR2 stands for the bench
 * ending on its own (`process.exit`, as on a failed scenario).
 */
import { spawn } from 'node:child_process';
import { supervise } from '../../../bench/child-process.js';
import { startPrivateCluster } from '../../../bench/private-cluster.js';
import { startProvider } from '../../../bench/provider-process.js';

process.once('SIGUSR2', () => process.exit(3));
if (process.env.SUPERVISED === 'provider') {
  console.log(`provider ${(await startProvider()).url}`);
} else if (process.env.SUPERVISED === 'cluster') {
  console.log(`cluster ${(await startPrivateCluster()).postmasterPid}`);
  // Nothing else keeps the bench alive: the server runs detached.
  setInterval(() => {}, 1 << 30);
} else {
  const child = supervise(spawn(process.execPath, ['-e', 'setInterval(() => {}, 1 << 30)'], { stdio: 'ignore' }));
  console.log(`child ${child.pid}`);
}
