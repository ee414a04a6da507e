import type { Command } from 'commander';
import { pruneRules } from '../../background/prune-in-batches.js';
import { count } from '../../core/option-rules.js';
import { pruneInbox } from '../../inbox/inbox.js';
import { pruneOutbox } from '../../outbox/prune.js';
import { maintenanceStore } from '../../postgres/postgres-maintenance-store.js';
import {
  type PruneTask,
  SWEEP_STEPS,
  type SweepProgress,
  type SweepStep,
  Sweeper,
  sweeperRules,
} from '../../retention/sweeper.js';
import type { SqlClient, SqlDatabase } from '../../store/sql-client.js';
import { pruneWebhookEvents } from '../../webhooks/prune.js';
import {
  CommandFailure,
  databaseCommand,
  type DatabaseFlags,
  describeError,
  output,
  usageError,
  numberFlag,
  withDatabase,
} from '../database-command.js';
import { printError } from '../terminal-text.js';

interface SweepFlags extends DatabaseFlags {
  readonly batchSize: number;
  readonly maxRecordsPerSecond?: number;
  readonly outboxOlderThan?: number;
  readonly inboxOlderThan?: number;
  readonly webhooksOlderThan?: number;
}

/** What each prune option removes, in the order a pass runs them and reports them. */
const PRUNES = [
  { name: 'outbox', flag: 'outboxOlderThan', what: 'delivered outbox messages', prune: pruneOutbox },
  { name: 'webhooks', flag: 'webhooksOlderThan', what: 'processed webhook events', prune: pruneWebhookEvents },
  { name: 'inbox', flag: 'inboxOlderThan', what: 'inbox records', prune: pruneInbox },
] as const;

/** What each step of a pass does, as a failure names it. */
const STEPS: Readonly<Record<SweepStep, string>> = {
  tombstone: 'turning expired responses into tombstones',
  delete: 'deleting expired tombstones',
  activity: 'pruning activity counts',
};

/** How often a long pass reports its progress on stderr. */
const PROGRESS_EVERY_MS = 1000;

/** `retrysafe sweep`: one pass of the sweeper, and of the prune tasks asked for. */
export function registerSweep(program: Command): Command {
  return databaseCommand(program, 'sweep')
    .description(
      'Apply retention once: turn expired responses into tombstones and delete expired tombstones, in small batches; then prune the messaging tables asked for.',
    )
    .option('--batch-size <n>', 'rows per statement', numberFlag(pruneRules.batchSize), 500)
    .option(
      '--max-records-per-second <n>',
      'tombstone and delete at most this many records a second, resting between batches (no limit by default)',
      numberFlag(count(1, sweeperRules.maxRecordsPerSecond.max)),
    )
    .option(
      '--outbox-older-than <seconds>',
      'also delete outbox messages delivered longer ago than this',
      numberFlag(pruneRules.olderThanSeconds),
    )
    .option(
      '--webhooks-older-than <seconds>',
      'also delete webhook events processed longer ago than this',
      numberFlag(pruneRules.olderThanSeconds),
    )
    .option(
      '--inbox-older-than <seconds>',
      'also delete inbox records older than this; keep them at least as long as webhook events',
      numberFlag(pruneRules.olderThanSeconds),
    )
    .action((flags: SweepFlags, command: Command) => {
      // A webhook redelivered after its event was pruned is recorded again; only the inbox then keeps it from running twice.
      if (
        flags.inboxOlderThan !== undefined &&
        flags.webhooksOlderThan !== undefined &&
        flags.inboxOlderThan < flags.webhooksOlderThan
      ) {
        usageError(
          command,
          '--inbox-older-than must be at least --webhooks-older-than: the inbox is what keeps a redelivered, pruned webhook from running twice.',
        );
      }
      return withDatabase(command, flags, async (database) => {
        const tasks = pruneTasks(database, flags);
        const sweeper = new Sweeper({
          store: maintenanceStore(database),
          batchSize: flags.batchSize,
          maxRecordsPerSecond: flags.maxRecordsPerSecond ?? Infinity,
          tasks,
          onBatch: progressLine(),
        });
        const report = await sweeper.runOnce();
        // Every step failed (the database unreachable, the schema missing): the pass failed, said in one line.
        const [first] = report.failed;
        if (first !== undefined && report.failed.length === SWEEP_STEPS.length) throw first.error;
        const pruned = Object.fromEntries(report.tasks.map((task) => [task.name, task.ok ? task.removed : null]));
        output(
          flags,
          {
            tombstoned: report.tombstoned,
            deleted: report.deleted,
            batches: report.batches,
            ...(tasks.length === 0 ? {} : { pruned }),
          },
          [
            `Tombstoned ${report.tombstoned} expired response${report.tombstoned === 1 ? '' : 's'} and deleted ${report.deleted} expired tombstone${report.deleted === 1 ? '' : 's'} in ${report.batches} batches.`,
            ...report.tasks
              .filter((task) => task.ok)
              .map((task) => `Pruned ${task.removed} ${PRUNES.find((p) => p.name === task.name)?.what ?? task.name}.`),
          ].join('\n'),
        );
        // A step or task that failed does not stop the others: each is named, after what the pass did.
        const failures = [
          ...report.failed.map(({ step, error }) => `${STEPS[step]} failed: ${describeError(error)}`),
          ...report.tasks.flatMap((task) =>
            task.ok ? [] : [`pruning ${task.name} failed: ${describeError(task.error)}`],
          ),
        ];
        if (failures.length > 0) throw new CommandFailure(failures.join('; '));
      });
    });
}

function pruneTasks(database: SqlDatabase<SqlClient>, flags: SweepFlags): PruneTask[] {
  return PRUNES.flatMap(({ name, flag, prune }) => {
    const olderThanSeconds = flags[flag];
    return olderThanSeconds === undefined
      ? []
      : [{ name, run: () => prune(database, { olderThanSeconds, batchSize: flags.batchSize }) }];
  });
}

/** Writes where a pass stands to stderr at most once a second, so a short pass stays silent. */
function progressLine(): (progress: SweepProgress) => void {
  let last = Date.now();
  return (progress) => {
    if (Date.now() - last < PROGRESS_EVERY_MS) return;
    last = Date.now();
    printError(
      `retrysafe sweep: ${progress.tombstoned} tombstoned, ${progress.deleted} deleted, ${progress.batches} batches so far\n`,
    );
  };
}
