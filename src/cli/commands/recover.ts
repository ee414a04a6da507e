import type { Command } from 'commander';
import { RecoveryWorker, type RecoveryReport, recoveryWorkerRules } from '../../leases/recovery-worker.js';
import { maintenanceStore } from '../../postgres/postgres-maintenance-store.js';
import { databaseCommand, type DatabaseFlags, numberFlag, output, withDatabase } from '../database-command.js';
import { loadOperationsModule } from '../operations-module.js';
import { printError } from '../terminal-text.js';

interface RecoverFlags extends DatabaseFlags {
  readonly once?: boolean;
  readonly module?: string;
  readonly batchSize: number;
  readonly idleMs: number;
}

/** `retrysafe recover`: the recovery worker, for one pass or until stopped. */
export function registerRecover(program: Command): Command {
  return databaseCommand(program, 'recover')
    .description(
      'Run the recovery worker: take over expired leases, complete leased operations whose handlers --module provides, and mark transparent ones unknown. Runs until SIGTERM or SIGINT unless --once.',
    )
    .option('--once', 'make one pass, print its report and exit')
    .option(
      '--module <path>',
      'a module exporting "operations" (leased operations) and optionally "config(database)"; see docs/operations.md',
    )
    .option('--batch-size <n>', 'expired leases taken per pass', numberFlag(recoveryWorkerRules.batchSize), 20)
    .option('--idle-ms <ms>', 'pause after a pass that found nothing', numberFlag(recoveryWorkerRules.idleMs), 1000)
    .action(async (flags: RecoverFlags, command: Command) => {
      const loaded = await loadOperationsModule(command, flags.module);
      await withDatabase(command, flags, async (database) => {
        const config = await loaded.config(database);
        const worker = new RecoveryWorker({
          config,
          operations: loaded.operations,
          batchSize: flags.batchSize,
          idleMs: flags.idleMs,
        });
        // The first pass runs in the foreground, so a database that cannot be reached fails the command at once.
        const first = await worker.runOnce();
        // The worker never reads leases it has no handler for: count them, so "examined 0" is not read as "nothing is stuck".
        const skipped = await maintenanceStore(database).unhandledLeases(
          loaded.operations.map((operation) => operation.operation),
        );
        const text = `${describeReport(first)}${describeSkipped(skipped)}`;
        if (flags.once === true) {
          // The unknown outcomes it marked, for the console's activity.
          await config.close();
          return output(flags, { ...first, skipped }, text);
        }
        printError(`retrysafe recover: first pass: ${text.replaceAll('\n', ' ')} Running until SIGTERM or SIGINT.\n`);
        await untilStopped((signal) => worker.run(signal));
        await config.close();
        printError('retrysafe recover: stopped.\n');
      });
    });
}

/** Runs `loop` until SIGTERM or SIGINT; the pass under way finishes first. */
async function untilStopped(loop: (signal: AbortSignal) => Promise<void>): Promise<void> {
  const controller = new AbortController();
  const stop = (): void => controller.abort();
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
  try {
    await loop(controller.signal);
  } finally {
    process.off('SIGTERM', stop);
    process.off('SIGINT', stop);
  }
}

function describeReport(report: RecoveryReport): string {
  return `Examined ${report.examined} expired lease${report.examined === 1 ? '' : 's'}: ${report.completed} completed, ${report.unknown} marked unknown, ${report.incomplete} incomplete, ${report.lost} taken by another worker.`;
}

/** Empty when every expired lease had a handler here; otherwise a second line naming the operations left alone. */
function describeSkipped(skipped: Readonly<Record<string, number>>): string {
  const entries = Object.entries(skipped);
  const total = entries.reduce((sum, [, count]) => sum + count, 0);
  if (total === 0) return '';
  const byOperation = entries.map(([operation, count]) => `${operation}: ${count}`).join(', ');
  return `\nSkipped ${total} expired lease${total === 1 ? '' : 's'} of leased operations this worker has no handler for (${byOperation}); pass --module with their handlers to complete them.`;
}
