import { CommanderError } from 'commander';
import { describe, expect, it } from 'vitest';
import { createProgram } from '../../src/cli/program.js';
import { expectOneLineError, retrysafe } from './run-cli.js';

const COMMANDS = [
  'migrate',
  'distribute',
  'inspect',
  'stuck',
  'list',
  'search',
  'sweep',
  'recover',
  'resolve',
  'retry',
  'purge',
  'dead-letters',
  'requeue',
  'parked-events',
  'requeue-event',
  'console',
];

/** `retrysafe <args>` in this process, as main.ts runs it: what it wrote, and its exit code. */
async function inProcess(args: readonly string[]): Promise<{ readonly code: number; readonly stdout: string }> {
  let stdout = '';
  const program = createProgram({ writeOut: (text) => (stdout += text), writeErr: () => undefined });
  const code = await program.parseAsync(args, { from: 'user' }).then(
    () => 0,
    (error: unknown) => {
      if (!(error instanceof CommanderError)) throw error;
      return error.exitCode;
    },
  );
  return { code, stdout };
}

describe('retrysafe operations commands', () => {
  it('each answer --help with their usage, --json and --database-url', async () => {
    // In this process: a process per command, all at once, outlasted the test's time with every core busy.
    for (const command of COMMANDS) {
      const run = await inProcess([command, '--help']);
      expect(run.code, command).toBe(0);
      expect(run.stdout).toContain(`Usage: retrysafe ${command}`);
      expect(run.stdout).toContain('--json');
      expect(run.stdout).toContain('--database-url <url>');
    }
    // And one through the command line, which exits with the status the program ends with.
    const run = await retrysafe(['migrate', '--help']);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('Usage: retrysafe migrate');
  });

  it('reject an unknown option with one line and exit code 2', async () => {
    const run = await retrysafe(['sweep', '--fast']);
    expect(run.code).toBe(2);
    expect(expectOneLineError(run)).toBe("error: unknown option '--fast'");
  });
});
