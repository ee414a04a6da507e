import { execFile } from 'node:child_process';
import { copyFile, mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, expect, it } from 'vitest';
import { builtSources } from './built-sources.js';

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
  const root = await mkdtemp(join(tmpdir(), 'retrysafe-built-sources-'));
  folders.push(root);
  await checkoutSaying(root, 'first');
  const first = await builtSources(root);
  // An edit, then a second run beside the first: it builds the new sources and removes the first's kept build.
  await checkoutSaying(root, 'second');
  const second = await builtSources(root);
  expect(await said(join(second.root, 'src/cli/main.js'))).toBe('second');
  expect(await said(join(first.root, 'src/cli/main.js'))).toBe('first');
  // Each run removes its own copy; the next run of the same sources copies the kept build rather than building.
  await first.remove();
  await second.remove();
  const third = await builtSources(root);
  expect(await said(join(third.root, 'src/cli/main.js'))).toBe('second');
  await third.remove();
  // What is left is the kept build of the latest sources, for the next run.
  expect(await readdir(join(root, '.tmp'))).toEqual([expect.stringMatching(/^built-[0-9a-f]{16}$/)]);
});

it('compiles each test program with what it imports from test/, runnable by Node alone', async () => {
  const root = await mkdtemp(join(tmpdir(), 'retrysafe-built-sources-'));
  folders.push(root);
  await checkoutSaying(root, 'unused');
  await writeFile(join(root, 'src', 'greeting.ts'), "export const greeting: string = 'hello';\n");
  await mkdir(join(root, 'test', 'area', 'programs'), { recursive: true });
  await mkdir(join(root, 'test', 'area', 'support'), { recursive: true });
  await writeFile(join(root, 'test', 'area', 'support', 'name.ts'), "export const name: string = 'program';\n");
  await writeFile(
    join(root, 'test', 'area', 'programs', 'greet.ts'),
    "import { greeting } from '../../../src/greeting.js';\nimport { name } from '../support/name.js';\nconsole.log(`${greeting} ${name}`);\n",
  );
  const built = await builtSources(root);
  expect(await said(join(built.root, 'test/area/programs/greet.js'))).toBe('hello program');
  await built.remove();
});
