import type { Command } from 'commander';
import { schemaSql } from '../../postgres/schema.js';
import { wholeNumber } from '../database-command.js';

/** `retrysafe schema`: prints the migrations' SQL for a migration tool; needs no database. */
export function registerSchema(program: Command): Command {
  return program
    .command('schema')
    .description(
      'Print the SQL of every retrysafe migration (or of those after --after), for Prisma Migrate, drizzle-kit, Knex or plain SQL files.',
    )
    .option('--after <version>', 'print only the migrations newer than this version', wholeNumber(0), 0)
    .action((flags: { readonly after: number }) => {
      process.stdout.write(schemaSql(flags.after));
    });
}
