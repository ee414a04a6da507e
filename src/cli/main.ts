#!/usr/bin/env node
import { readFileSync } from 'node:fs';
import { Command, CommanderError } from 'commander';
import { registerCheck } from './commands/check.js';
import { registerConsole } from './commands/console.js';
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
import { print, printError } from './terminal-text.js';

/** Every subcommand lives in `commands/` and adds itself to the program. */
const commands: readonly ((program: Command) => Command)[] = [
  registerMigrate,
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

/** Exit code of a usage error (unknown option, missing argument, bad value). */
const USAGE_ERROR = 2;

function createProgram(): Command {
  const program = new Command('retrysafe')
    .description('Idempotency keys done right, on PostgreSQL.')
    .version(packageVersion());
  // Throw instead of exiting, so usage errors get their own exit code.
  program.exitOverride();
  // Help and usage errors echo arguments: printed as everything else is. Set before the commands, which inherit it.
  program.configureOutput({ writeOut: print, writeErr: printError });
  // The program's own options (--version) only before a command: after it, `requeue --version` is the command's.
  program.enablePositionalOptions();
  for (const register of commands) register(program);
  return program;
}

function packageVersion(): string {
  // The same relative path from src/cli and from dist/cli.
  const manifest = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
    version?: unknown;
  };
  return typeof manifest.version === 'string' ? manifest.version : '0.0.0';
}

try {
  await createProgram().parseAsync(process.argv);
} catch (error) {
  if (!(error instanceof CommanderError)) throw error;
  process.exitCode = error.exitCode === 0 ? 0 : USAGE_ERROR;
}
