// `npm test`: the format check first (it takes seconds), then the type check and
// lint beside the test suites rather than before them. The suites spend much of
// their time waiting on databases and child processes, and tsc and ESLint each
// keep one core busy for minutes on a fresh clone: side by side they finish in
// the suites' time. Each one's output is its own; the exit code is the first
// failure's.
import { spawn } from 'node:child_process';
import process from 'node:process';

function run(command, args) {
  return new Promise((resolve) => {
    const child = spawn(command, args, { stdio: 'inherit' });
    child.on('exit', (code) => resolve(code ?? 1));
  });
}

const formatted = await run('npm', ['run', '--silent', 'format:check']);
if (formatted !== 0) process.exit(formatted);
// Arguments after `npm test --` go to Vitest, as they did when the script ended with `vitest run`.
const codes = await Promise.all([
  run('npm', ['run', '--silent', 'typecheck']),
  run('npm', ['run', '--silent', 'lint']),
  run('npx', ['--no', 'vitest', 'run', ...process.argv.slice(2)]),
]);
process.exit(codes.find((code) => code !== 0) ?? 0);
