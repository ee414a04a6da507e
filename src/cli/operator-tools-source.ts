import type { Command } from 'commander';
import type { OperatorTools } from '../operator/operator-tools.js';
import { postgresOperatorTools } from '../postgres/postgres-operator-tools.js';
import { reportFailures, type DatabaseFlags, withDatabase } from './database-command.js';
import { loadOperationsModule } from './operations-module.js';

/** The flags an operator command reads its seam by: the database, and `--module` where it takes one. */
export interface OperatorToolsFlags extends DatabaseFlags {
  readonly module?: string;
}

/**
 * Where the operator commands get the operator seam, for one run of a
 * command: they run `work` over it and read nothing else. A failure is
 * reported as every command's is (`reportFailures`).
 */
export type OperatorToolsSource = (
  command: Command,
  flags: OperatorToolsFlags,
  work: (tools: OperatorTools<unknown>) => Promise<void>,
) => Promise<void>;

/**
 * The seam on PostgreSQL at `--database-url`, resolving and retrying with the
 * configuration of `--module` (`config(database)`): the command line's one
 * composition point of the operator seam.
 */
export const postgresToolsSource: OperatorToolsSource = async (command, flags, work) => {
  const loaded = await loadOperationsModule(command, flags.module);
  await withDatabase(command, flags, async (database) =>
    work(postgresOperatorTools(database, await loaded.config(database))),
  );
};

/** A source over tools built elsewhere (an application's own store): `work` runs on them, failures reported. */
export function operatorToolsSource(tools: OperatorTools<unknown>): OperatorToolsSource {
  return (command, _flags, work) => reportFailures(command, () => work(tools));
}
