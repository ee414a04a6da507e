import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { inject } from 'vitest';

const root = fileURLToPath(new URL('../../../', import.meta.url));

/** A test program running as a real child process. */
export interface ChildProgram {
  /** What it printed so far, stdout and stderr, for assertions and diagnosis. */
  output(): string;
  /** Its stdout lines that are JSON, parsed. */
  records(): unknown[];
  /** Resolves with the exit code, or the signal that ended it, once all it printed has been read. */
  readonly exited: Promise<number | NodeJS.Signals>;
  kill(signal: NodeJS.Signals): Promise<number | NodeJS.Signals>;
}

/**
 * A test program (test/<area>/programs/) as the global set-up compiled it; an example's, which imports retrysafe by
 * name, through tsx.
 */
function programArguments(file: string): string[] {
  return file.startsWith('test/')
    ? [join(inject('builtSources'), file.replace(/\.ts$/, '.js'))]
    : ['--conditions=retrysafe-source', '--import', 'tsx', file];
}

/** Starts `file` (relative to the repository) with `env` on top of this process's environment. */
export function startProgram(file: string, env: Readonly<Record<string, string>>): ChildProgram {
  const { RETRYSAFE_CRASH_AT: _armed, ...inherited } = process.env;
  const child: ChildProcess = spawn(process.execPath, programArguments(file), {
    cwd: root,
    env: { ...inherited, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    stdout += chunk.toString('utf8');
    output += chunk.toString('utf8');
  });
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  // 'close', not 'exit': at 'exit' its last records may still be on their way through the pipe. These programs start
  // no processes of their own that could hold the pipe open after it.
  const exited = new Promise<number | NodeJS.Signals>((resolve) =>
    child.once('close', (code, signal) => resolve(code ?? signal ?? 'SIGKILL')),
  );
  return {
    output: () => output,
    records: () =>
      stdout
        .split('\n')
        .filter((line) => line.startsWith('{'))
        .map((line) => JSON.parse(line) as unknown),
    exited,
    kill(signal) {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return exited;
    },
  };
}

/** Runs `file` to its end and insists on `expected` (an exit code or a signal), showing its output otherwise. */
export async function runProgram(
  file: string,
  env: Readonly<Record<string, string>>,
  expected: number | NodeJS.Signals = 0,
): Promise<ChildProgram> {
  const program = startProgram(file, env);
  const ended = await program.exited;
  if (ended !== expected) throw new Error(`${file} ended with ${ended}, expected ${expected}:\n${program.output()}`);
  return program;
}
