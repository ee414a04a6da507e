import { type Command, Option } from 'commander';
import type { RecordState } from '../../core/record.js';
import type { KeyMatch, OperationQuery, OperationSummary, Page } from '../../store/operator-store.js';
import {
  databaseCommand,
  type DatabaseFlags,
  output,
  usageError,
  numberFlag,
  OLDER_THAN,
  PAGE_LIMIT,
} from '../database-command.js';
import { KEY_DESCRIPTION, keyArgument } from '../key-argument.js';
import { textTable } from '../text-table.js';
import type { OperatorToolsSource } from '../operator-tools-source.js';

interface ListFlags extends DatabaseFlags {
  readonly state?: RecordState;
  readonly tenant?: string;
  readonly operation?: string;
  readonly key?: string;
  readonly keyPrefix?: string;
  readonly olderThan?: number;
  readonly limit: number;
  readonly cursor?: string;
}

const STATES: readonly RecordState[] = ['unknown', 'in_progress', 'completed', 'failed', 'tombstone'];

/** `retrysafe list`: operations by state, tenant, operation, key and age, a page at a time. */
export function registerList(program: Command, source: OperatorToolsSource): Command {
  return pageOptions(databaseCommand(program, 'list'))
    .description('List operations, a page at a time: by state, tenant, operation, key or key prefix, and age.')
    .addOption(new Option('--state <state>', 'only operations in this state').choices(STATES))
    .option('--tenant <tenant>', "only this tenant's operations")
    .option('--operation <name>', 'only this operation, like payments.create@1')
    .option('--key <key>', `only this key: ${KEY_DESCRIPTION}`, keyArgument)
    .option('--key-prefix <prefix>', 'only keys that start with this')
    .action((flags: ListFlags, command: Command) => {
      if (flags.key !== undefined && flags.keyPrefix !== undefined)
        usageError(command, 'give --key or --key-prefix, not both.');
      return source(command, flags, async ({ operators }) => {
        const key: KeyMatch | undefined =
          flags.key !== undefined
            ? { match: 'exact', key: flags.key }
            : flags.keyPrefix !== undefined
              ? { match: 'prefix', prefix: flags.keyPrefix }
              : undefined;
        print(flags, await operators.list(query(flags, key)));
      });
    });
}

/** `retrysafe search <key>`: a key in every tenant and operation, whole or as a prefix. */
export function registerSearch(program: Command, source: OperatorToolsSource): Command {
  return pageOptions(databaseCommand(program, 'search'))
    .description('Find a key in every tenant and operation; with --prefix, every key that starts with it.')
    .argument('<key>', KEY_DESCRIPTION)
    .option('--prefix', 'match keys that start with <key>')
    .action((key: string, flags: ListFlags & { readonly prefix?: boolean }, command: Command) =>
      source(command, flags, async ({ operators }) => {
        const match: KeyMatch =
          flags.prefix === true ? { match: 'prefix', prefix: key } : { match: 'exact', key: keyArgument(key) };
        print(flags, await operators.list(query(flags, match)));
      }),
    );
}

function pageOptions(command: Command): Command {
  return command
    .option('--older-than <seconds>', 'only operations claimed at least this long ago', numberFlag(OLDER_THAN))
    .option('--limit <n>', 'most operations on the page (up to 1000)', numberFlag(PAGE_LIMIT), 50)
    .option('--cursor <cursor>', 'the page after the one that printed this cursor');
}

function query(flags: ListFlags, key: KeyMatch | undefined): OperationQuery {
  return {
    ...(flags.state === undefined ? {} : { state: flags.state }),
    ...(flags.tenant === undefined ? {} : { tenant: flags.tenant }),
    ...(flags.operation === undefined ? {} : { operation: flags.operation }),
    ...(key === undefined ? {} : { key }),
    ...(flags.olderThan === undefined ? {} : { olderThanSeconds: flags.olderThan }),
    limit: flags.limit,
    ...(flags.cursor === undefined ? {} : { after: flags.cursor }),
  };
}

function print(flags: DatabaseFlags, found: Page<OperationSummary>): void {
  const items = found.items.map((op) => ({
    ...op.identity,
    state: op.state,
    mode: op.mode,
    attempt: op.attempt,
    fencingToken: op.fencingToken,
    status: op.status,
    createdAt: op.createdAt.toISOString(),
    reason: op.reason,
  }));
  const header = ['STATE', 'TENANT', 'OPERATION', 'KEY', 'MODE', 'ATTEMPT', 'STATUS', 'CLAIMED'];
  const rows = found.items.map((op) => [
    op.state,
    op.identity.tenant,
    op.identity.operation,
    op.identity.key,
    op.mode,
    String(op.attempt),
    String(op.status ?? ''),
    op.createdAt.toISOString(),
  ]);
  const table = textTable(header, rows);
  const text =
    found.items.length === 0
      ? 'No operations match.'
      : `${table}${found.next === undefined ? '' : `\nMore: --cursor ${found.next}`}`;
  output(flags, { items, next: found.next ?? null }, text);
}
