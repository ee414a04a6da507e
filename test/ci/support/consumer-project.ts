import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdir, symlink, writeFile } from 'node:fs/promises';
import { connect } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';

const exec = promisify(execFile);
const lock = JSON.parse(readFileSync(new URL('../../../package-lock.json', import.meta.url), 'utf8')) as {
  packages: Record<string, { version?: string }>;
};

/** The version this repository's lock file pins, so a consumer gets what the tests ran with. */
function locked(name: string): string {
  const version = lock.packages[`node_modules/${name}`]?.version;
  if (version === undefined) throw new Error(`${name} is not in package-lock.json`);
  return `${name}@${version}`;
}

/** What a strict project of a new user looks like: ES modules, `nodenext`, and every check `tsc --init` turns on (exact optional properties, verbatim module syntax among them). */
const TSCONFIG = {
  compilerOptions: {
    target: 'ES2022',
    module: 'nodenext',
    moduleResolution: 'nodenext',
    strict: true,
    noUncheckedIndexedAccess: true,
    exactOptionalPropertyTypes: true,
    verbatimModuleSyntax: true,
    isolatedModules: true,
    noUncheckedSideEffectImports: true,
    moduleDetection: 'force',
    types: ['node'],
    outDir: 'build',
    rootDir: '.',
  },
  include: ['*.ts'],
};

/** A fresh project that installs the packed package and the given packages, as a user would. */
export async function createConsumer(
  directory: string,
  tarball: string,
  packages: readonly string[],
  options: Readonly<Record<string, unknown>> = {},
): Promise<void> {
  await writeProject(directory, options);
  const wanted = ['typescript', '@types/node', ...packages].map(locked);
  await exec(
    'npm',
    ['install', '--prefer-offline', '--no-audit', '--no-fund', '--loglevel=error', tarball, ...wanted],
    { cwd: directory, maxBuffer: 16 * 1024 * 1024 },
  );
}

/**
 * A fresh project like `createConsumer`'s that uses the packages `installed` (a project made by `createConsumer`)
 * holds: for projects that install the same packages, so that npm installs them once.
 */
export async function shareConsumer(
  directory: string,
  installed: string,
  options: Readonly<Record<string, unknown>> = {},
): Promise<void> {
  await writeProject(directory, options);
  await symlink(join(installed, 'node_modules'), join(directory, 'node_modules'), 'dir');
}

async function writeProject(directory: string, options: Readonly<Record<string, unknown>>): Promise<void> {
  await mkdir(directory, { recursive: true });
  await writeFile(
    join(directory, 'package.json'),
    JSON.stringify({ name: 'consumer', private: true, type: 'module' }, null, 2),
  );
  await writeFile(
    join(directory, 'tsconfig.json'),
    JSON.stringify({ ...TSCONFIG, compilerOptions: { ...TSCONFIG.compilerOptions, ...options } }, null, 2),
  );
}

/** Type-checks and compiles the project with its own TypeScript; the compiler's output on failure. */
export async function compile(directory: string): Promise<string | undefined> {
  try {
    await exec(join(directory, 'node_modules/.bin/tsc'), ['-p', directory], { cwd: directory });
    return undefined;
  } catch (error) {
    const { stdout, stderr } = error as { stdout?: string; stderr?: string };
    return `${stdout ?? ''}${stderr ?? ''}` || String(error);
  }
}

/** A newcomer's shell, not this test run's: no broker or database settings it did not name. */
function newcomer(env: Record<string, string>): Record<string, string> {
  return { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env };
}

/** Runs a documented setup script (`npx prisma generate`) in the project, as its reader would; stops at the first failing command. */
export async function runSetup(directory: string, script: string, env: Record<string, string> = {}): Promise<void> {
  await exec('sh', ['-e', '-c', script], { cwd: directory, env: newcomer(env), maxBuffer: 16 * 1024 * 1024 });
}

/** Runs a compiled snippet with node to its end, within `timeoutMs`; what it printed, or its output in the error when it fails. */
export async function runProgram(
  directory: string,
  file: string,
  env: Record<string, string>,
  timeoutMs = 60_000,
): Promise<string> {
  try {
    const { stdout, stderr } = await exec(process.execPath, [join(directory, 'build', file.replace(/\.ts$/, '.js'))], {
      cwd: directory,
      env: newcomer(env),
      timeout: timeoutMs,
      maxBuffer: 16 * 1024 * 1024,
    });
    return `${stdout}${stderr}`;
  } catch (error) {
    const { stdout, stderr, code, signal } = error as {
      stdout?: string;
      stderr?: string;
      code?: unknown;
      signal?: unknown;
    };
    throw new Error(`${file} ended with ${String(signal ?? code)}:\n${stdout ?? ''}${stderr ?? ''}`, { cause: error });
  }
}

export interface Server {
  readonly process: ChildProcess;
  output(): string;
  stop(): Promise<void>;
}

/** Runs a compiled snippet with node and waits until it accepts connections on `port`. */
export function startSnippet(
  directory: string,
  file: string,
  port: number,
  env: Record<string, string>,
): Promise<Server> {
  return startServer(directory, [join(directory, 'build', file.replace(/\.ts$/, '.js'))], port, env);
}

/** Runs node with `args` and waits until it accepts connections on `port`, given as PORT. */
export async function startServer(
  directory: string,
  args: readonly string[],
  port: number,
  env: Record<string, string>,
): Promise<Server> {
  const child = spawn(process.execPath, args, {
    cwd: directory,
    env: newcomer({ ...env, PORT: String(port) }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const server: Server = {
    process: child,
    output: () => output,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
  for (let tries = 0; !(await accepts(port)); tries += 1) {
    if (child.exitCode !== null || tries > 300) {
      await server.stop();
      throw new Error(`${args.join(' ')} did not listen on ${port}:\n${output}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return server;
}

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: 'localhost', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}
