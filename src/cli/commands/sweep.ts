import type { Command } from 'commander';
import { maintenanceStore } from '../../postgres/maintenance-store.js';
import { type SweepProgress, Sweeper } from '../../retention/sweeper.js';
import { databaseCommand, type DatabaseFlags, output, wholeNumber, withDatabase } from '../database-command.js';

interface SweepFlags extends DatabaseFlags {
  readonly batchSize: number;
}

/** How often a long pass reports its progress on stderr. */
const PROGRESS_EVERY_MS = 1000;

/** `retrysafe sweep`: one pass of the sweeper. */
export function registerSweep(program: Command): Command {
  return databaseCommand(program, 'sweep')
    .description('Apply retention once: turn expired responses into tombstones and delete expired tombstones, in small batches.')
    .option('--batch-size <n>', 'rows per statement', wholeNumber(1), 500)
    .action((flags: SweepFlags, command: Command) =>
      withDatabase(command, flags, async (database) => {
        const sweeper = new Sweeper({ store: maintenanceStore(database), batchSize: flags.batchSize, onBatch: progressLine() });
        const report = await sweeper.runOnce();
        output(
          flags,
          { tombstoned: report.tombstoned, deleted: report.deleted, batches: report.batches },
          `Tombstoned ${report.tombstoned} expired response${report.tombstoned === 1 ? '' : 's'} and deleted ${report.deleted} expired tombstone${report.deleted === 1 ? '' : 's'} in ${report.batches} batches.`,
        );
      }),
    );
}

/** Writes where a pass stands to stderr at most once a second, so a short pass stays silent. */
function progressLine(): (progress: SweepProgress) => void {
  let last = Date.now();
  return (progress) => {
    if (Date.now() - last < PROGRESS_EVERY_MS) return;
    last = Date.now();
    process.stderr.write(`retrysafe sweep: ${progress.tombstoned} tombstoned, ${progress.deleted} deleted, ${progress.batches} batches so far\n`);
  };
}
