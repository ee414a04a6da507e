import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';

const root = fileURLToPath(new URL('../..', import.meta.url));

it('a failing test fails the run, also when the run starts its own PostgreSQL', async () => {
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => name !== 'TEST_DATABASE_URL' && !name.startsWith('VITEST')));
  const run = spawn(process.execPath, ['node_modules/vitest/vitest.mjs', 'run', '--config', 'test/support/fixtures/failing.config.ts'], { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  run.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  run.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const code = await new Promise<number | null>((resolve) => run.once('close', resolve));
  expect(output).toMatch(/1 failed/);
  expect(code).toBe(1);
}, 120_000);
