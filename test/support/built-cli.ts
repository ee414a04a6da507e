import { createHash } from 'node:crypto';
import { access, copyFile, mkdir, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import ts from 'typescript';

/**
 * The command line compiled to JavaScript once per change of its sources, under `.tmp/cli-<digest>/`: a test that
 * runs it pays for a Node start, not for compiling every source file through tsx inside its time budget. Each file
 * is transpiled alone (the type check is `npm test`'s own); package.json sits beside `src/`, where the program reads
 * its version, and the packages resolve from the checkout's node_modules. Returns the path of `src/cli/main.js`.
 */
export async function builtCli(root: string): Promise<string> {
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
  const target = join(root, '.tmp', name);
  const main = join(target, 'src', 'cli', 'main.js');
  const built = await access(main).then(
    () => true,
    () => false,
  );
  if (built) return main;
  const options = compilerOptions(root);
  // Runs side by side may each build one: a rename puts a whole tree in place, never half of one.
  const building = `${target}.${process.pid}`;
  await rm(building, { recursive: true, force: true });
  for (const [file, text] of texts) {
    const output = join(building, 'src', file.replace(/\.ts$/, '.js'));
    await mkdir(dirname(output), { recursive: true });
    await writeFile(output, ts.transpileModule(text, { compilerOptions: options, fileName: file }).outputText);
  }
  await copyFile(join(root, 'package.json'), join(building, 'package.json'));
  await rename(building, target).catch(async (error: unknown) => {
    await rm(building, { recursive: true, force: true });
    // Another run put the same build in place first.
    if (
      !(await access(main).then(
        () => true,
        () => false,
      ))
    )
      throw error;
  });
  for (const stale of await readdir(join(root, '.tmp')))
    if (/^cli-[0-9a-f]{16}$/.test(stale) && stale !== name)
      await rm(join(root, '.tmp', stale), { recursive: true, force: true });
  return main;
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
