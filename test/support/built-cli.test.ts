import { execFile } from 'node:child_process';
import { copyFile, mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, expect, it } from 'vitest';
import { builtCli } from './built-cli.js';

const checkout = new URL('../../', import.meta.url).pathname;
const folders: string[] = [];
afterAll(() => Promise.all(folders.map((folder) => rm(folder, { recursive: true, force: true }))));

/** A checkout of its own whose command line prints `said`. */
async function checkoutSaying(root: string, said: string): Promise<void> {
  await mkdir(join(root, 'src', 'cli'), { recursive: true });
  for (const file of ['package.json', 'tsconfig.json', 'tsconfig.build.json'])
    await copyFile(join(checkout, file), join(root, file));
  await writeFile(join(root, 'src', 'cli', 'main.ts'), `console.log(${JSON.stringify(said)});\n`);
}

async function said(main: string): Promise<string> {
  return (await promisify(execFile)(process.execPath, [main])).stdout.trim();
}

it('never removes the command line a run uses when a run of other sources builds its own', async () => {
  const root = await mkdtemp(join(tmpdir(), 'retrysafe-built-cli-'));
  folders.push(root);
  await checkoutSaying(root, 'first');
  const first = await builtCli(root);
  // An edit, then a second run beside the first: it builds the new sources and removes the first's kept build.
  await checkoutSaying(root, 'second');
  const second = await builtCli(root);
  expect(await said(second.main)).toBe('second');
  expect(await said(first.main)).toBe('first');
  // Each run removes its own copy; the next run of the same sources copies the kept build rather than building.
  await first.remove();
  await second.remove();
  const third = await builtCli(root);
  expect(await said(third.main)).toBe('second');
  await third.remove();
  // What is left is the kept build of the latest sources, for the next run.
  expect(await readdir(join(root, '.tmp'))).toEqual([expect.stringMatching(/^cli-[0-9a-f]{16}$/)]);
});
