/**
 * A bench-like parent. SUPERVISED=provider: starts the bench's payment provider and
 * prints its URL. Otherwise: starts, under the bench's supervision, a child
 * that would run for ever, and prints its pid. SIGUSR2 stands for the bench
 * ending on its own (`process.exit`, as on a failed scenario).
 */
import { spawn } from 'node:child_process';
import { supervise } from '../../../bench/child-process.js';
import { startProvider } from '../../../bench/provider-process.js';

process.once('SIGUSR2', () => process.exit(3));
if (process.env.SUPERVISED === 'provider') {
  console.log(`provider ${(await startProvider()).url}`);
} else {
  const child = supervise(spawn(process.execPath, ['-e', 'setInterval(() => {}, 1 << 30)'], { stdio: 'ignore' }));
  console.log(`child ${child.pid}`);
}
