import { type ChildProcess, spawn } from 'node:child_process';
import { createInterface } from 'node:readline';

/** A program of the test suite running as a real child process. */
export interface Child {
  readonly process: ChildProcess;
  /** Resolves when the process has exited, with its signal when it was killed. */
  readonly exited: Promise<{ readonly code: number | null; readonly signal: NodeJS.Signals | null }>;
  /** The captured standard error, for failure messages. */
  stderr(): string;
  kill(signal?: NodeJS.Signals): Promise<void>;
}

/** Runs a TypeScript program with tsx and waits until it prints a line matching `ready`. */
export async function startProgram(
  path: string,
  env: Record<string, string>,
  ready: RegExp,
): Promise<Child & { readonly match: RegExpMatchArray }> {
  const child = spawn(process.execPath, ['--import', 'tsx', path], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let errors = '';
  child.stderr.on('data', (chunk: Buffer) => {
    errors += chunk.toString();
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  const handle: Child = {
    process: child,
    exited,
    stderr: () => errors,
    async kill(signal = 'SIGKILL') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      await exited;
    },
  };
  const lines = createInterface({ input: child.stdout });
  const match = await new Promise<RegExpMatchArray>((resolve, reject) => {
    lines.on('line', (line) => {
      const found = line.match(ready);
      if (found !== null) resolve(found);
    });
    void exited.then(({ code, signal }) =>
      reject(new Error(`${path} exited (${code ?? signal}) before it was ready: ${errors}`)),
    );
  });
  return { ...handle, match };
}

/** Runs a program to completion and returns its standard output; `flags` go to Node (`--expose-gc`). */
export async function runProgram(
  path: string,
  env: Record<string, string>,
  flags: readonly string[] = [],
): Promise<string> {
  const child = spawn(process.execPath, [...flags, '--import', 'tsx', path], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let errors = '';
  child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (errors += chunk.toString()));
  // 'close', not 'exit': at 'exit' the last of its output may still be on its way through the pipe.
  const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
  if (code !== 0) throw new Error(`${path} exited with ${code}: ${errors}`);
  return out;
}
