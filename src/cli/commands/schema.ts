import type { Command } from 'commander';
import { isRetrysafeError } from '../../core/errors.js';
import { distributionSql } from '../../postgres/distribute.js';
import { latestSchemaVersion, schemaSql } from '../../postgres/schema.js';
import { numberFlag } from '../database-command.js';
import { count } from '../../core/option-rules.js';
import { print, printError } from '../terminal-text.js';

/** Exit code of a failure at run time, as the database commands use it. */
const RUNTIME_FAILURE = 1;

interface SchemaFlags {
  readonly after: number;
  readonly citus?: boolean;
  readonly colocateWith?: string;
}

const colocation = (flags: SchemaFlags) =>
  flags.colocateWith === undefined ? {} : { colocateWith: flags.colocateWith };

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
    .option('--citus', 'print instead the SQL `retrysafe distribute` runs on a Citus coordinator after the migrations')
    .option('--colocate-with <table>', "with --citus: the application's distributed table retrysafe's tables join")
    .action((flags: SchemaFlags) => {
      let script: string;
      try {
        script = flags.citus === true ? distributionSql(colocation(flags)) : schemaSql(flags.after);
      } catch (error) {
        if (!isRetrysafeError(error, 'schema-too-new') && !isRetrysafeError(error, 'misuse')) throw error;
        printError(`retrysafe schema: ${error.code}: ${error.message}\n`);
        process.exitCode = RUNTIME_FAILURE;
        return;
      }
      print(script);
      // The script then only creates the table of versions if missing: said where a terminal shows it.
      if (flags.citus !== true && flags.after === latestSchemaVersion)
        printError(`retrysafe schema: nothing after version ${latestSchemaVersion}, this retrysafe's latest.\n`);
    });
}
