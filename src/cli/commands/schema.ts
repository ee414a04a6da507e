import type { Command } from 'commander';
import { isRetrysafeError } from '../../core/errors.js';
import { latestSchemaVersion, schemaSql } from '../../postgres/schema.js';
import { numberFlag } from '../database-command.js';
import { count } from '../../core/option-rules.js';
import { print, printError } from '../terminal-text.js';

/** Exit code of a failure at run time, as the database commands use it. */
const RUNTIME_FAILURE = 1;

/** `retrysafe schema`: prints the migrations' SQL for a migration tool; needs no database. */
export function registerSchema(program: Command): Command {
  return program
    .command('schema')
    .description(
      'Print the SQL of every retrysafe migration (or of those after --after), for Prisma Migrate, drizzle-kit, Knex or plain SQL files.',
    )
    .option(
      '--after <version>',
      `print only the migrations newer than this version (this retrysafe's latest: ${latestSchemaVersion})`,
      numberFlag(count(0, Number.MAX_SAFE_INTEGER)),
      0,
    )
    .action((flags: { readonly after: number }) => {
      let script: string;
      try {
        script = schemaSql(flags.after);
      } catch (error) {
        if (!isRetrysafeError(error, 'schema-too-new')) throw error;
        printError(`retrysafe schema: ${error.code}: ${error.message}\n`);
        process.exitCode = RUNTIME_FAILURE;
        return;
      }
      print(script);
      // The script then only creates the table of versions if missing: said where a terminal shows it.
      if (flags.after === latestSchemaVersion)
        printError(`retrysafe schema: nothing after version ${latestSchemaVersion}, this retrysafe's latest.\n`);
    });
}
