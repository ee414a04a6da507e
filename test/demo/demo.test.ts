import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { expect, it } from 'vitest';
import { codeBlocks } from '../support/markdown-blocks.js';

const exec = promisify(execFile);
const root = new URL('../../', import.meta.url).pathname;

it('npm run demo: duplicates without keys, none with retrysafe/client, counted by the database', async () => {
  const { stdout } = await exec('npm', ['run', '--silent', 'demo'], { cwd: root, timeout: 120_000 });
  const count = (client: string) =>
    stdout.match(new RegExp(`^ {2}${client.replace('/', '\\/')} +(\\d+) orders placed, (\\d+) in the database`, 'm'));
  const withoutKeys = count('without keys');
  const withClient = count('retrysafe/client');
  expect(withoutKeys, stdout).not.toBeNull();
  expect(withClient, stdout).not.toBeNull();
  expect(Number(withoutKeys?.[2]), stdout).toBeGreaterThan(Number(withoutKeys?.[1]));
  expect(Number(withClient?.[2]), stdout).toBe(Number(withClient?.[1]));
  expect(stdout).toMatch(/^retrysafe\/client +\d+ +2 +201 replayed/m);
  // The README's first screen shows the end of this output as it is.
  const shown = codeBlocks(`${root}README.md`).find((block) => block.language === 'text');
  for (const line of shown?.code.trimEnd().split('\n') ?? ['(no text block in the README)'])
    expect(stdout).toContain(line);
}, 120_000); // a fresh PGlite and two dozen orders: more than the default 30 s on a busy machine
