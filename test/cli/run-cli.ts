import { once } from 'node:events';
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { inject } from 'vitest';

export const root = fileURLToPath(new URL('../..', import.meta.url));

/** tsx's loader by its own path, so that a program in a folder that cannot resolve tsx runs too. */
const tsxLoader = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;

export interface Run {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** A running `retrysafe` process, with what it has written so far. */
export interface Running {
  readonly child: ChildProcessWithoutNullStreams;
  readonly output: { stdout: string; stderr: string };
  readonly exited: Promise<Run>;
}

/**
 * Starts `retrysafe <args>` as a real process: the repository's command line as
 * the global set-up compiled it, or `cwd`'s `src/cli/main.ts` through tsx, as
 * with a `--module` the program loads, which may be TypeScript. The environment
 * is the test's own without DATABASE_URL, plus `env`.
 */
export function startRetrysafe(
  args: readonly string[],
  env: Readonly<Record<string, string>> = {},
  cwd = root,
): Running {
  const { DATABASE_URL: _ignored, ...inherited } = process.env;
  const program =
    cwd === root && !args.includes('--module')
      ? [join(inject('builtSources'), 'src', 'cli', 'main.js')]
      : ['--import', tsxLoader, 'src/cli/main.ts'];
  const child = spawn(process.execPath, [...program, ...args], {
    cwd,
    env: { ...inherited, ...env },
  });
  const output = { stdout: '', stderr: '' };
  child.stdout.on('data', (chunk: Buffer) => (output.stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output.stderr += chunk.toString()));
  const exited = new Promise<Run>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, ...output }));
  });
  return { child, output, exited };
}

/** Where a started `retrysafe console` answers, once it says so: `http://host:port`. */
export async function consoleUrl(running: Running): Promise<string> {
  for (;;) {
    const match = /Console on (http:\/\/\S+)\//.exec(running.output.stdout);
    if (match?.[1] !== undefined) return match[1];
    const ended = await Promise.race([running.exited, once(running.child.stdout, 'data').then(() => undefined)]);
    if (ended !== undefined) throw new Error(`the console exited: ${ended.stderr}`);
  }
}

/** Runs `retrysafe <args>` to its end. */
export function retrysafe(
  args: readonly string[],
  env: Readonly<Record<string, string>> = {},
  cwd = root,
): Promise<Run> {
  return startRetrysafe(args, env, cwd).exited;
}

/** The checks every failing command must pass: one line on stderr, no stack trace, nothing on stdout. */
export function expectOneLineError(run: Run): string {
  const lines = run.stderr.trimEnd().split('\n');
  if (lines.length !== 1 || /^\s+at /m.test(run.stderr) || run.stdout !== '') {
    throw new Error(`expected one line on stderr and nothing on stdout, got:\n${run.stderr}\n---\n${run.stdout}`);
  }
  return lines[0] ?? '';
}
