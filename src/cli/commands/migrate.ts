import type { Command } from 'commander';
import { migrate } from '../../postgres/migrate.js';
import { databaseCommand, type DatabaseFlags, output, withDatabase } from '../database-command.js';

/** `retrysafe migrate`: creates or upgrades retrysafe's tables. */
export function registerMigrate(program: Command): Command {
  return databaseCommand(program, 'migrate')
    .description('Create or upgrade the retrysafe tables. Safe to run again, and from several processes at once.')
    .action((flags: DatabaseFlags, command: Command) =>
      withDatabase(command, flags, async (database) => {
        const result = await migrate(database);
        const text =
          result.applied.length === 0
            ? `Schema is at version ${result.version}; nothing to apply.`
            : `Applied version${result.applied.length === 1 ? '' : 's'} ${result.applied.join(', ')}. Schema is at version ${result.version}.`;
        output(flags, result, text);
      }),
    );
}
