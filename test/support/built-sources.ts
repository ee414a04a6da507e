import { createHash, randomBytes } from 'node:crypto';
import { copyFile, cp, mkdir, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import ts from 'typescript';

/** A run's own copy of the compiled sources, and how to remove it. */
export interface BuiltSources {
  /** Holds `src/` and the test programs as JavaScript, each where its TypeScript is in the checkout. */
  readonly root: string;
  remove(): Promise<void>;
}

/**
 * The command line and the test programs (every file under a `test/<area>/programs/` folder, and what they import
 * from test/) compiled to JavaScript: a test that runs one as a process pays for a Node start, not for compiling its
 * every source file through tsx inside its time budget. Each file is transpiled alone (the type check is `npm test`'s
 * own); package.json sits beside `src/`, where the command line reads its version, and the packages resolve from
 * the checkout's node_modules. A build is kept under `.tmp/built-<digest>/` for the next run with the same sources;
 * each run copies it to `.tmp/built-run-<pid>-<random>/` and runs that copy, which no other run removes: runs side by
 * side with other sources (an edit between two) remove each other's kept builds, never the copy a run is using.
 */
export async function builtSources(root: string): Promise<BuiltSources> {
  const sources = (await readdir(join(root, 'src'), { recursive: true, encoding: 'utf8' }))
    .filter((file) => file.endsWith('.ts') && !file.endsWith('.test.ts') && !file.endsWith('.d.ts'))
    .map((file) => join('src', file));
  const digest = createHash('sha256').update(await readFile(join(root, 'package.json')));
  const texts = new Map<string, string>();
  for (const file of [...sources, ...(await programSources(root))].sort()) {
    const text = await readFile(join(root, file), 'utf8');
    texts.set(file, text);
    digest.update(`\0${file}\0`).update(text);
  }
  const name = `built-${digest.digest('hex').slice(0, 16)}`;
  const kept = join(root, '.tmp', name);
  const copy = join(root, '.tmp', `built-run-${process.pid}-${randomBytes(4).toString('hex')}`);
  const remove = () => rm(copy, { recursive: true, force: true });
  try {
    await cp(kept, copy, { recursive: true });
  } catch {
    // Not kept yet, or removed while copied by a run of other sources: this run builds its own.
    await remove();
    await build(root, texts, copy);
    await keep(copy, kept);
  }
  await removeStale(root, name);
  return { root: copy, remove };
}

/** The test programs and the files of test/ they import, by path in the checkout. */
async function programSources(root: string): Promise<readonly string[]> {
  const tests = await readdir(join(root, 'test'), { recursive: true, encoding: 'utf8' }).catch(() => []);
  const queue = tests.filter((file) => /^[^/]+\/programs\/.+\.ts$/.test(file)).map((file) => join('test', file));
  const found = new Set<string>();
  for (let file = queue.pop(); file !== undefined; file = queue.pop()) {
    if (found.has(file)) continue;
    found.add(file);
    for (const { fileName } of ts.preProcessFile(await readFile(join(root, file), 'utf8')).importedFiles) {
      const imported = join(dirname(file), fileName).replace(/\.js$/, '.ts');
      // A package, or a source, which are all built.
      if (fileName.startsWith('.') && !imported.startsWith('src/')) queue.push(imported);
    }
  }
  return [...found];
}

async function build(root: string, texts: ReadonlyMap<string, string>, target: string): Promise<void> {
  const options = compilerOptions(root);
  for (const [file, text] of texts) {
    const output = join(target, file.replace(/\.ts$/, '.js'));
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
    const left = /^built-(?:run|removed)-(\d+)-[0-9a-f]+$/.exec(entry) ?? /^built-[0-9a-f]{16}\.(\d+)$/.exec(entry);
    if (left !== null) {
      if (!running(Number(left[1]))) await rm(join(folder, entry), { recursive: true, force: true });
    } else if (/^built-[0-9a-f]{16}$/.test(entry) && entry !== name) {
      const removed = join(folder, `built-removed-${process.pid}-${randomBytes(4).toString('hex')}`);
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
