import { type Command, InvalidArgumentError } from 'commander';
import { isParkedVersion } from '../../store/operator-rules.js';
import { databaseCommand } from '../database-command.js';
import { actOnMessage, actorOptions, type ActorFlags } from '../operator-action.js';
import { pageCommand } from '../page-command.js';
import type { OperatorToolsSource } from '../operator-tools-source.js';

interface RequeueFlags extends ActorFlags {
  readonly version: string;
}

/** `retrysafe dead-letters`: the outbox's messages the relay parked, most recent first, each with its version. */
export function registerDeadLetters(program: Command, source: OperatorToolsSource): Command {
  return pageCommand(program, source, {
    name: 'dead-letters',
    description: 'List the outbox messages the relay parked after failing too often (dead letters), most recent first.',
    things: 'messages',
    read: (operators, query) => operators.deadLetters(query),
    item: (message) => ({
      id: message.id,
      topic: message.topic,
      attempts: message.attempts,
      lastError: message.lastError,
      createdAt: message.createdAt.toISOString(),
      parkedAt: message.parkedAt.toISOString(),
      version: message.version,
    }),
    line: (message) =>
      `${message.id}  ${message.topic}  ${message.attempts} attempts  version ${message.version}  ${message.lastError ?? ''}`,
    none: 'No dead letters.',
  });
}

/** `retrysafe requeue <message-id>`: an operator sends a dead letter again, if it is still parked as listed. */
export function registerRequeue(program: Command, source: OperatorToolsSource): Command {
  return actorOptions(
    databaseCommand(program, 'requeue')
      .description(
        'Send a dead letter of the outbox again with a fresh count of attempts, only if it is still parked at the version "retrysafe dead-letters" printed. Recorded with who and why.',
      )
      .argument('<message-id>', 'the message id, as "retrysafe dead-letters" printed it')
      .requiredOption(
        '--version <version>',
        'the version "retrysafe dead-letters" printed: when it was parked, to the microsecond',
        parkedVersion,
      ),
    'why, for the audit trail',
  ).action((id: string, flags: RequeueFlags, command: Command) =>
    actOnMessage(
      source,
      command,
      flags,
      { action: 'requeue', messageId: id, seen: flags.version },
      `dead letter ${id} is not parked at version ${flags.version}: it was requeued, parked again or is no dead letter; nothing was changed.`,
      [{ requeued: true }, `Requeued ${id}: the relay sends it again under the same id.`],
    ),
  );
}

/** A commander parser for a version as the operator store prints it: a UTC time to the microsecond. */
function parkedVersion(value: string): string {
  if (!isParkedVersion(value))
    throw new InvalidArgumentError(
      'expected a version as "retrysafe dead-letters" prints it, like 2026-12-03T15:13:06.512337Z.',
    );
  return value;
}
