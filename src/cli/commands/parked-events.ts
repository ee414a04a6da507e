import { userInfo } from 'node:os';
import type { Command } from 'commander';
import { operatorStore } from '../../postgres/postgres-operator-store.js';
import {
  CommandFailure,
  databaseCommand,
  type DatabaseFlags,
  output,
  withDatabase,
  wholeNumber,
} from '../database-command.js';

interface PageFlags extends DatabaseFlags {
  readonly limit: number;
  readonly cursor?: string;
}

interface RequeueFlags extends DatabaseFlags {
  readonly parkedAt: string;
  readonly reason: string;
  readonly actor?: string;
}

/** `retrysafe parked-events`: webhook events the worker parked, most recent first, each with its parking time. */
export function registerParkedEvents(program: Command): Command {
  return databaseCommand(program, 'parked-events')
    .description('List the webhook events the worker parked after failing too often, most recent first.')
    .option('--limit <n>', 'most events on the page (up to 1000)', wholeNumber(1), 50)
    .option('--cursor <cursor>', 'the page after the one that printed this cursor')
    .action((flags: PageFlags, command: Command) =>
      withDatabase(command, flags, async (database) => {
        const found = await operatorStore(database).parkedEvents({
          limit: flags.limit,
          ...(flags.cursor === undefined ? {} : { after: flags.cursor }),
        });
        const items = found.items.map((event) => ({
          receiver: event.receiver,
          id: event.id,
          attempts: event.attempts,
          lastError: event.lastError,
          receivedAt: event.receivedAt.toISOString(),
          parkedAt: event.version,
        }));
        const lines = items.map((event) =>
          `${event.receiver}  ${event.id}  parked at ${event.parkedAt || '(before migration 11)'}  ${event.lastError ?? ''}`.trimEnd(),
        );
        const text =
          items.length === 0
            ? 'No parked webhook events.'
            : `${lines.join('\n')}${found.next === undefined ? '' : `\nMore: --cursor ${found.next}`}`;
        output(flags, { items, next: found.next ?? null }, text);
      }),
    );
}

/** `retrysafe requeue-event <receiver> <id>`: an operator puts a parked webhook event back, if it is still parked as listed. */
export function registerRequeueEvent(program: Command): Command {
  return databaseCommand(program, 'requeue-event')
    .description(
      'Process a parked webhook event again with a fresh count of attempts, only if it is still parked at the time "retrysafe parked-events" printed.',
    )
    .argument('<receiver>', 'the receiver the event came to')
    .argument('<id>', "the sender's webhook-id")
    .requiredOption(
      '--parked-at <time>',
      'when it was parked, as "retrysafe parked-events" printed it ("" before migration 11)',
    )
    .requiredOption('--reason <text>', 'why, for the audit trail')
    .option('--actor <name>', 'who is recorded with the action (default: the user running the command)')
    .action((receiver: string, id: string, flags: RequeueFlags, command: Command) =>
      withDatabase(command, flags, async (database) => {
        const by = { actor: flags.actor ?? userInfo().username, reason: flags.reason };
        if (!(await operatorStore(database).requeueEvent({ receiver, id }, flags.parkedAt, by)))
          throw new CommandFailure(
            `${receiver}/${id} is not parked at ${flags.parkedAt || '(no time)'}: it was requeued, parked again or never parked; nothing was changed.`,
          );
        output(flags, { requeued: true }, `Requeued ${receiver}/${id}: the webhook worker processes it again.`);
      }),
    );
}
