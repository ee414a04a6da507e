import type { Command } from 'commander';
import { maintenanceStore } from '../../postgres/maintenance-store.js';
import type { StuckOperation } from '../../store/maintenance-store.js';
import { databaseCommand, type DatabaseFlags, output, wholeNumber, withDatabase } from '../database-command.js';

interface StuckFlags extends DatabaseFlags {
  readonly olderThan: number;
  readonly limit: number;
}

/** `retrysafe stuck`: expired leases and unknown outcomes, oldest first. */
export function registerStuck(program: Command): Command {
  return databaseCommand(program, 'stuck')
    .description('List operations that need attention: expired leases (the recovery backlog) and unknown outcomes.')
    .option('--older-than <seconds>', 'only operations claimed at least this long ago', wholeNumber(0), 0)
    .option('--limit <n>', 'most operations listed of each kind', wholeNumber(1), 100)
    .action((flags: StuckFlags, command: Command) =>
      withDatabase(command, flags, async (database) => {
        const stuck = await maintenanceStore(database).stuck({ olderThanSeconds: flags.olderThan, limit: flags.limit });
        const rows = stuck.map((s) => ({
          kind: s.kind,
          ...s.identity,
          mode: s.mode,
          attempt: s.attempt,
          createdAt: s.createdAt.toISOString(),
          ageSeconds: Math.floor(s.ageSeconds),
          leaseExpiresAt: s.leaseExpiresAt?.toISOString(),
          reason: s.reason,
        }));
        output(flags, rows, stuck.length === 0 ? 'No expired leases and no unknown operations.' : table(stuck));
      }),
    );
}

function table(stuck: readonly StuckOperation[]): string {
  const header = ['KIND', 'AGE', 'TENANT', 'OPERATION', 'KEY', 'MODE', 'ATTEMPT', 'REASON'];
  const rows = stuck.map((s) => [s.kind, age(s.ageSeconds), s.identity.tenant, s.identity.operation, s.identity.key, s.mode, String(s.attempt), shortReason(s.reason)]);
  const widths = header.map((title, i) => Math.max(title.length, ...rows.map((row) => (row[i] ?? '').length)));
  return [header, ...rows].map((row) => row.map((cell, i) => cell.padEnd(widths[i] ?? 0)).join('  ').trimEnd()).join('\n');
}

/** The table shows the start of the reason on one line; `--json` has all of it. */
function shortReason(reason: string | undefined): string {
  const line = (reason ?? '').replace(/\s+/g, ' ');
  return line.length > 80 ? `${line.slice(0, 79)}…` : line;
}

/** `3d4h`, `2h5m`, `4m10s`, `9s`: the two largest units are enough to read an age. */
function age(seconds: number): string {
  const units: [string, number][] = [
    ['d', 86_400],
    ['h', 3_600],
    ['m', 60],
    ['s', 1],
  ];
  let rest = Math.floor(seconds);
  const parts: string[] = [];
  for (const [unit, size] of units) {
    if (parts.length === 2) break;
    const count = Math.floor(rest / size);
    rest -= count * size;
    if (count > 0 || parts.length > 0 || size === 1) parts.push(`${count}${unit}`);
  }
  return parts.join('');
}
