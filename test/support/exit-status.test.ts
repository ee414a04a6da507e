import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';

const root = fileURLToPath(new URL('../..', import.meta.url));

/** Vitest in a child process with `npm test`'s global setup and no TEST_DATABASE_URL, so that it starts its own PostgreSQL. */
async function runFixture(
  fixture: 'failing' | 'passing',
): Promise<{ readonly code: number | null; readonly output: string }> {
  const inherited = Object.entries(process.env).filter(
    ([name]) => name !== 'TEST_DATABASE_URL' && !name.startsWith('VITEST'),
  );
  const env = { ...Object.fromEntries(inherited), RETRYSAFE_FIXTURE: fixture };
  const run = spawn(
    process.execPath,
    ['node_modules/vitest/vitest.mjs', 'run', '--config', 'test/support/fixtures/fixture.config.ts'],
    { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let output = '';
  run.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  run.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const code = await new Promise<number | null>((resolve) => run.once('close', resolve));
  return { code, output };
}

it('a failing test fails the run, and a passing run ends with status 0, also when the run starts its own PostgreSQL', async () => {
  const [failing, passing] = await Promise.all([runFixture('failing'), runFixture('passing')]);
  expect(failing.output).toMatch(/1 failed/);
  expect(failing.code).toBe(1);
  expect(passing.output).toMatch(/1 passed/);
  expect(passing.output).not.toMatch(/Error/);
  expect(passing.code).toBe(0);
}, 120_000);
