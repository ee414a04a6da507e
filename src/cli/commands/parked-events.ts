import type { Command } from 'commander';
import { databaseCommand } from '../database-command.js';
import { actOnMessage, actorOptions, type ActorFlags } from '../operator-action.js';
import { pageCommand } from '../page-command.js';
import type { OperatorToolsSource } from '../operator-tools-source.js';

interface RequeueFlags extends ActorFlags {
  readonly parkedAt: string;
}

/** `retrysafe parked-events`: webhook events the worker parked, most recent first, each with its parking time. */
export function registerParkedEvents(program: Command, source: OperatorToolsSource): Command {
  return pageCommand(program, source, {
    name: 'parked-events',
    description: 'List the webhook events the worker parked after failing too often, most recent first.',
    things: 'events',
    read: (operators, query) => operators.parkedEvents(query),
    item: (event) => ({
      receiver: event.receiver,
      id: event.id,
      attempts: event.attempts,
      lastError: event.lastError,
      receivedAt: event.receivedAt.toISOString(),
      parkedAt: event.version,
    }),
    line: (event) =>
      `${event.receiver}  ${event.id}  parked at ${event.parkedAt || '(before migration 11)'}  ${event.lastError ?? ''}`,
    none: 'No parked webhook events.',
  });
}

/** `retrysafe requeue-event <receiver> <id>`: an operator puts a parked webhook event back, if it is still parked as listed. */
export function registerRequeueEvent(program: Command, source: OperatorToolsSource): Command {
  return actorOptions(
    databaseCommand(program, 'requeue-event')
      .description(
        'Process a parked webhook event again with a fresh count of attempts, only if it is still parked at the time "retrysafe parked-events" printed. Recorded with who and why.',
      )
      .argument('<receiver>', 'the receiver the event came to')
      .argument('<id>', "the sender's webhook-id")
      .requiredOption(
        '--parked-at <time>',
        'when it was parked, as "retrysafe parked-events" printed it ("" before migration 11)',
      ),
    'why, for the audit trail',
  ).action((receiver: string, id: string, flags: RequeueFlags, command: Command) =>
    actOnMessage(
      source,
      command,
      flags,
      { action: 'requeue-event', event: { receiver, id }, seen: flags.parkedAt },
      `${receiver}/${id} is not parked at ${flags.parkedAt || '(no time)'}: it was requeued, parked again or never parked; nothing was changed.`,
      [{ requeued: true }, `Requeued ${receiver}/${id}: the webhook worker processes it again.`],
    ),
  );
}
