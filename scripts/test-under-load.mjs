// `node scripts/test-under-load.mjs [-- vitest arguments]`: `npm test` with every core kept busy by a
// process of its own, as on a shared machine. A test that passes only on an idle one waits a fixed time
// or bounds wall time; this shows it before continuous integration does. Exits with `npm test`'s code.
import { spawn } from 'node:child_process';
import { availableParallelism, constants } from 'node:os';
import process from 'node:process';

// Each busy process also leaves once this one is gone, should it die before it can end them (SIGKILL).
const spin = `for (let i = 0; ; i += 1) if (i % 1e8 === 0 && process.ppid !== ${process.pid}) process.exit(0);`;
const busy = Array.from({ length: availableParallelism() }, () =>
  spawn(process.execPath, ['-e', spin], { stdio: 'ignore' }),
);
const stopBusy = () => {
  for (const child of busy) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
};
process.on('exit', stopBusy);

const args = process.argv.slice(2);
const passed = args.length === 0 || args[0] === '--' ? args : ['--', ...args];
// A process group of its own, so that a signal reaches every process npm started, not npm alone.
const tests = spawn('npm', ['test', ...passed], { stdio: 'inherit', detached: true });
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
  process.on(signal, () => {
    stopBusy();
    process.kill(-tests.pid, signal);
  });
}
tests.on('error', (error) => {
  process.stderr.write(`${String(error)}\n`);
  process.exit(1);
});
tests.on('exit', (code, signal) => {
  process.exit(code ?? 128 + (constants.signals[signal] ?? 0));
});
