import type { Command } from 'commander';
import { attentionReason, NOTHING_STUCK } from '../../console/attention.js';
import { ageText } from '../../core/age.js';
import type { StuckOperation } from '../../store/maintenance-store.js';
import { databaseCommand, type DatabaseFlags, numberFlag, OLDER_THAN, output } from '../database-command.js';
import { count } from '../../core/option-rules.js';
import { textTable } from '../text-table.js';
import type { OperatorToolsSource } from '../operator-tools-source.js';

interface StuckFlags extends DatabaseFlags {
  readonly olderThan: number;
  readonly limit: number;
}

/** `retrysafe stuck`: expired leases, operations backing off and unknown outcomes, oldest first. */
export function registerStuck(program: Command, source: OperatorToolsSource): Command {
  return databaseCommand(program, 'stuck')
    .description(
      'List operations that need attention: expired leases (the recovery backlog), operations backing off after failed attempts, and unknown outcomes.',
    )
    .option('--older-than <seconds>', 'only operations claimed at least this long ago', numberFlag(OLDER_THAN), 0)
    .option('--limit <n>', 'most operations listed of each kind', numberFlag(count(1, 10_000)), 100)
    .action((flags: StuckFlags, command: Command) =>
      source(command, flags, async ({ health }) => {
        const stuck = await health.stuck({ olderThanSeconds: flags.olderThan, limit: flags.limit });
        const rows = stuck.map((s) => ({
          kind: s.kind,
          ...s.identity,
          mode: s.mode,
          attempt: s.attempt,
          createdAt: s.createdAt.toISOString(),
          ageSeconds: Math.floor(s.ageSeconds),
          leaseExpiresAt: s.leaseExpiresAt?.toISOString(),
          reason: s.reason,
          failures: s.failures,
          nextAttemptAt: s.nextAttemptAt?.toISOString(),
          lastError: s.lastError,
        }));
        output(flags, rows, stuck.length === 0 ? NOTHING_STUCK : table(stuck));
      }),
    );
}

function table(stuck: readonly StuckOperation[]): string {
  const header = ['KIND', 'AGE', 'TENANT', 'OPERATION', 'KEY', 'MODE', 'ATTEMPT', 'REASON'];
  const rows = stuck.map((s) => [
    s.kind,
    ageText(s.ageSeconds),
    s.identity.tenant,
    s.identity.operation,
    s.identity.key,
    s.mode,
    String(s.attempt),
    shortReason(attentionReason(s)),
  ]);
  return textTable(header, rows);
}

/** The table shows the start of the reason on one line; `--json` has all of it. */
function shortReason(reason: string | undefined): string {
  const line = (reason ?? '').replace(/\s+/g, ' ');
  return line.length > 80 ? `${line.slice(0, 79)}…` : line;
}
