import { type ChildProcess, fork } from 'node:child_process';
import { closeSync, openSync, readFileSync } from 'node:fs';
import { constants } from 'node:os';
import { fileURLToPath } from 'node:url';

export const repoRoot = fileURLToPath(new URL('..', import.meta.url));

export interface ChildOptions {
  /** Added to this process's environment. */
  readonly env: Record<string, string>;
  /** Where the child's stdout and stderr go. */
  readonly logFile: string;
}

/** A TypeScript entry point run under tsx in its own Node process, with an IPC channel. */
export function forkTs(entry: string, options: ChildOptions): ChildProcess {
  const log = openSync(options.logFile, 'a');
  try {
    return supervise(
      fork(fileURLToPath(new URL(entry, import.meta.url)), [], {
        cwd: repoRoot,
        execArgv: ['--import', 'tsx'],
        env: { ...process.env, ...options.env },
        stdio: ['ignore', log, log, 'ipc'],
      }),
    );
  } finally {
    closeSync(log);
  }
}

/** Waits for the first message that `accept` recognises; rejects if `accept` throws, the child exits first or time runs out. */
export function nextMessage<T>(
  child: ChildProcess,
  accept: (message: unknown) => T | undefined,
  timeoutMs: number,
  logFile: string,
): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => fail(new Error(`no answer from the child within ${timeoutMs} ms`)), timeoutMs);
    const onMessage = (message: unknown): void => {
      let accepted: T | undefined;
      try {
        accepted = accept(message);
      } catch (error) {
        return fail(error instanceof Error ? error : new Error(String(error)));
      }
      if (accepted === undefined) return;
      cleanup();
      resolve(accepted);
    };
    const onExit = (code: number | null): void => fail(new Error(`the child exited (${code ?? 'signal'}) early`));
    function cleanup(): void {
      clearTimeout(timer);
      child.off('message', onMessage);
      child.off('exit', onExit);
    }
    function fail(error: Error): void {
      cleanup();
      reject(new Error(`${error.message}; its log ends with:\n${tail(logFile)}`));
    }
    child.on('message', onMessage);
    child.once('exit', onExit);
  });
}

/** Resolves when the child has exited, killing it if it takes longer than `timeoutMs`. */
export function exited(child: ChildProcess, timeoutMs: number): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
  });
}

function tail(file: string): string {
  try {
    return readFileSync(file, 'utf8').split('\n').slice(-20).join('\n');
  } catch {
    return '(no log)';
  }
}

const endings = new Set<() => void>();

/**
 * Runs `end` when the bench exits: on its own, or on a SIGINT or SIGTERM sent
 * to the bench alone (by a supervisor, or by npm passing on Ctrl-C), which
 * then exits with 128 + the signal's number. `end` runs synchronously, as
 * the process exits. Returns a function that cancels it.
 */
export function endWithTheBench(end: () => void): () => void {
  watchTheBench();
  endings.add(end);
  return () => endings.delete(end);
}

/**
 * Ends `child` with the bench. A provider or a server left running would hold
 * its port and load the machine the next run measures.
 */
export function supervise<Child extends ChildProcess>(child: Child): Child {
  const cancel = endWithTheBench(() => child.kill('SIGTERM'));
  child.once('exit', cancel);
  return child;
}

let watching = false;

function watchTheBench(): void {
  if (watching) return;
  watching = true;
  process.once('exit', () => {
    for (const end of endings) end();
  });
  for (const signal of ['SIGINT', 'SIGTERM'] as const)
    process.once(signal, () => process.exit(128 + constants.signals[signal]));
}
