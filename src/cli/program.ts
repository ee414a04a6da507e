import { readFileSync } from 'node:fs';
import { Command, type OutputConfiguration } from 'commander';
import { registerCheck } from './commands/check.js';
import { registerConsole } from './commands/console.js';
import { registerDistribute } from './commands/distribute.js';
import { registerDeadLetters, registerRequeue } from './commands/dead-letters.js';
import { registerInspect } from './commands/inspect.js';
import { registerList, registerSearch } from './commands/list.js';
import { registerMigrate } from './commands/migrate.js';
import { registerParkedEvents, registerRequeueEvent } from './commands/parked-events.js';
import { registerPurge } from './commands/purge.js';
import { registerRecover } from './commands/recover.js';
import { registerResolve } from './commands/resolve.js';
import { registerRetry } from './commands/retry.js';
import { registerSchema } from './commands/schema.js';
import { registerStuck } from './commands/stuck.js';
import { registerSweep } from './commands/sweep.js';
import { type OperatorToolsSource, postgresToolsSource } from './operator-tools-source.js';
import { print, printError } from './terminal-text.js';

/** Every subcommand lives in `commands/` and adds itself to the program; the operator commands take the operator seam from `source`. */
const commands: readonly ((program: Command, source: OperatorToolsSource) => Command)[] = [
  registerMigrate,
  registerDistribute,
  registerSchema,
  registerInspect,
  registerStuck,
  registerList,
  registerSearch,
  registerSweep,
  registerRecover,
  registerResolve,
  registerRetry,
  registerPurge,
  registerDeadLetters,
  registerRequeue,
  registerParkedEvents,
  registerRequeueEvent,
  registerConsole,
  registerCheck,
];

/**
 * The `retrysafe` program with every command. It throws a `CommanderError`
 * rather than exiting; `output` replaces where commander writes (tests).
 * Help and usage errors echo arguments, so by default they are printed as
 * everything else is, control characters escaped. The operator commands run
 * over the operator seam `source` gives them: by default PostgreSQL at
 * `--database-url`.
 */
export function createProgram(
  output: OutputConfiguration = { writeOut: print, writeErr: printError },
  source: OperatorToolsSource = postgresToolsSource,
): Command {
  const program = new Command('retrysafe')
    .description('Idempotency keys done right, on PostgreSQL.')
    .version(packageVersion());
  // Throw instead of exiting, so usage errors get their own exit code.
  program.exitOverride();
  // The program's own options (--version) only before a command: after it, `requeue --version` is the command's.
  program.enablePositionalOptions();
  // Set before the commands, which inherit it.
  program.configureOutput(output);
  for (const register of commands) register(program, source);
  return program;
}

function packageVersion(): string {
  // The same relative path from src/cli and from dist/cli.
  const manifest = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
    version?: unknown;
  };
  return typeof manifest.version === 'string' ? manifest.version : '0.0.0';
}
