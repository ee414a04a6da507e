import { createHash, randomBytes } from 'node:crypto';
import { copyFile, cp, mkdir, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import ts from 'typescript';

/** A run's own copy of the compiled command line: the path of its `src/cli/main.js`, and how to remove the copy. */
export interface BuiltCli {
  readonly main: string;
  remove(): Promise<void>;
}

/**
 * The command line compiled to JavaScript: a test that runs it pays for a Node start, not for compiling every source
 * file through tsx inside its time budget. Each file is transpiled alone (the type check is `npm test`'s own);
 * package.json sits beside `src/`, where the program reads its version, and the packages resolve from the checkout's
 * node_modules. A build is kept under `.tmp/cli-<digest>/` for the next run with the same sources; each run copies it
 * to `.tmp/cli-run-<pid>-<random>/` and runs that copy, which no other run removes: runs side by side with other
 * sources (an edit between two) remove each other's kept builds, never the copy a run is using.
 */
export async function builtCli(root: string): Promise<BuiltCli> {
  const sources = (await readdir(join(root, 'src'), { recursive: true, encoding: 'utf8' }))
    .filter((file) => file.endsWith('.ts') && !file.endsWith('.test.ts') && !file.endsWith('.d.ts'))
    .sort();
  const digest = createHash('sha256').update(await readFile(join(root, 'package.json')));
  const texts = new Map<string, string>();
  for (const file of sources) {
    const text = await readFile(join(root, 'src', file), 'utf8');
    texts.set(file, text);
    digest.update(`\0${file}\0`).update(text);
  }
  const name = `cli-${digest.digest('hex').slice(0, 16)}`;
  const kept = join(root, '.tmp', name);
  const copy = join(root, '.tmp', `cli-run-${process.pid}-${randomBytes(4).toString('hex')}`);
  const remove = () => rm(copy, { recursive: true, force: true });
  try {
    await cp(kept, copy, { recursive: true, errorOnExist: true, force: false });
  } catch {
    // Not kept yet, or removed while copied by a run of other sources: this run builds its own.
    await remove();
    await build(root, texts, copy);
    await keep(copy, kept);
  }
  await removeStale(root, name);
  return { main: join(copy, 'src', 'cli', 'main.js'), remove };
}

async function build(root: string, texts: ReadonlyMap<string, string>, target: string): Promise<void> {
  const options = compilerOptions(root);
  for (const [file, text] of texts) {
    const output = join(target, 'src', file.replace(/\.ts$/, '.js'));
    await mkdir(dirname(output), { recursive: true });
    await writeFile(output, ts.transpileModule(text, { compilerOptions: options, fileName: file }).outputText);
  }
  await copyFile(join(root, 'package.json'), join(target, 'package.json'));
}

/** Keeps a copy of `built` as `kept` for later runs. Runs side by side may each keep one: a rename puts a whole tree in place, never half of one. */
async function keep(built: string, kept: string): Promise<void> {
  const building = `${kept}.${process.pid}`;
  await rm(building, { recursive: true, force: true });
  await cp(built, building, { recursive: true });
  // Another run may have put the same build in place first: theirs stays.
  await rename(building, kept).catch(() => rm(building, { recursive: true, force: true }));
}

/**
 * Kept builds of other sources, and what runs that ended left behind. A kept build is renamed before it is removed,
 * so a run copying it meets an error, never a tree with files missing.
 */
async function removeStale(root: string, name: string): Promise<void> {
  const folder = join(root, '.tmp');
  for (const entry of await readdir(folder)) {
    const left = /^cli-(?:run|removed)-(\d+)-[0-9a-f]+$/.exec(entry) ?? /^cli-[0-9a-f]{16}\.(\d+)$/.exec(entry);
    if (left !== null) {
      if (!running(Number(left[1]))) await rm(join(folder, entry), { recursive: true, force: true });
    } else if (/^cli-[0-9a-f]{16}$/.test(entry) && entry !== name) {
      const removed = join(folder, `cli-removed-${process.pid}-${randomBytes(4).toString('hex')}`);
      // Another run may have removed it first.
      if (
        await rename(join(folder, entry), removed).then(
          () => true,
          () => false,
        )
      )
        await rm(removed, { recursive: true, force: true });
    }
  }
}

function running(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it runs, as another user.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function compilerOptions(root: string): ts.CompilerOptions {
  const file = join(root, 'tsconfig.build.json');
  const read = ts.readConfigFile(file, (path) => ts.sys.readFile(path));
  const parsed = ts.parseJsonConfigFileContent(read.config, ts.sys, root, undefined, file);
  // Alone, a file cannot tell it is an ES module (package.json says so): NodeNext would emit CommonJS.
  return {
    ...parsed.options,
    module: ts.ModuleKind.ESNext,
    moduleResolution: ts.ModuleResolutionKind.Bundler,
    declaration: false,
    sourceMap: false,
    noEmit: false,
  };
}
