import type { Command } from 'commander';
import { distribute } from '../../postgres/distribute.js';
import { databaseCommand, type DatabaseFlags, output, withDatabase } from '../database-command.js';

interface DistributeFlags extends DatabaseFlags {
  readonly colocateWith?: string;
}

/** `retrysafe distribute`: distributes retrysafe's tables on a Citus coordinator, after `migrate`. */
export function registerDistribute(program: Command): Command {
  return databaseCommand(program, 'distribute')
    .description(
      "On a Citus coordinator, after migrate: distribute retrysafe's tenant tables by tenant and make the others reference tables. Safe to run again.",
    )
    .option(
      '--colocate-with <table>',
      "the application's table, distributed by a text tenant column, whose colocation group retrysafe's tables join",
    )
    .action((flags: DistributeFlags, command: Command) =>
      withDatabase(command, flags, async (database) => {
        const result = await distribute(
          database,
          flags.colocateWith === undefined ? {} : { colocateWith: flags.colocateWith },
        );
        output(
          flags,
          result,
          result.distributed.length === 0
            ? 'Every retrysafe table is distributed; nothing to do.'
            : `Distributed ${result.distributed.join(', ')}.`,
        );
      }),
    );
}
