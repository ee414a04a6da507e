import { userInfo } from 'node:os';
import { type Command, InvalidArgumentError } from 'commander';
import { type OperatorAction, runOperatorAction } from '../operator/operator-actions.js';
import type { OperationIdentity } from '../core/identity.js';
import type { RecordState } from '../core/record.js';
import type { Actor, OperationView, RecordVersion } from '../store/operator-store.js';
import { fencingTokenRule } from '../store/operator-rules.js';
import {
  CommandFailure,
  databaseCommand,
  type DatabaseFlags,
  identityLabel,
  output,
  numberFlag,
} from './database-command.js';
import { KEY_DESCRIPTION, keyArgument } from './key-argument.js';
import type { OperatorToolsSource } from './operator-tools-source.js';

/** The options of every command that acts as an operator: why, and who. */
export interface ActorFlags extends DatabaseFlags {
  readonly reason: string;
  readonly actor?: string;
}

/** The options of the commands that act on one operation. */
export interface OperationActionFlags extends ActorFlags {
  readonly fencingToken?: number;
  readonly module?: string;
}

/** Who an action is recorded with: `--actor`, else the user running the command, else `cli`. */
export function actorName(given: string | undefined): string {
  if (given !== undefined) return given;
  try {
    // Throws where the user has no entry in the password database (a container's arbitrary uid).
    return userInfo().username || 'cli';
  } catch {
    return 'cli';
  }
}

/** Who acts and why, as `retrysafe_operator_actions` records it. */
export function actorOf(flags: ActorFlags): Actor {
  return { actor: actorName(flags.actor), reason: flags.reason };
}

/** Adds `--reason <text>` (required) and `--actor <name>`, both recorded with the action. */
export function actorOptions(command: Command, reason: string): Command {
  return command
    .requiredOption('--reason <text>', reason, nonBlank)
    .option('--actor <name>', 'who is recorded with the action (default: the user running the command)', nonBlank);
}

/**
 * Adds `name <tenant> <operation> <key>` with `--reason`, `--actor` and
 * `--fencing-token`: the options of an action on one operation.
 */
export function operationActionCommand(program: Command, name: string, reason: string): Command {
  return actorOptions(
    databaseCommand(program, name)
      .argument('<tenant>', 'the tenant the key belongs to')
      .argument('<operation>', 'the operation name with its version, like payments.create@1')
      .argument('<key>', KEY_DESCRIPTION, keyArgument),
    reason,
  ).option(
    '--fencing-token <n>',
    'the fencing token of the record as you inspected it ("retrysafe inspect"): refused if the record has another since',
    numberFlag(fencingTokenRule),
  );
}

/** How one command acts on an operation. */
export interface OperationActionSpec {
  /** The action on the record as read now. */
  readonly plan: (seen: RecordVersion) => OperatorAction;
  /** The states it acts on; default: any. */
  readonly states?: readonly RecordState[];
  /** Why the command stops before acting on the record as read (purge without `--yes`); undefined to act. */
  readonly check?: (view: OperationView) => string | undefined;
  /** Printed once done: `--json`, then text. */
  readonly done: readonly [json: unknown, text: string];
}

/**
 * Reads the operation's version; refuses it when absent, in another state or
 * at another fencing token than `--fencing-token`; then runs the action
 * through `runOperatorAction` on that version: fenced and recorded with who
 * and why, as the console does.
 */
export async function actOnOperation(
  source: OperatorToolsSource,
  command: Command,
  flags: OperationActionFlags,
  identity: OperationIdentity,
  spec: OperationActionSpec,
): Promise<void> {
  await source(command, flags, async (tools) => {
    const { operators } = tools;
    const label = identityLabel(identity);
    const view = await operators.operation(identity);
    if (view === undefined) throw new CommandFailure(`no operation ${label}.`);
    const { state, fencingToken } = view.version;
    if (spec.states !== undefined && !spec.states.includes(state)) throw notInState(label, view, spec.states);
    if (flags.fencingToken !== undefined && flags.fencingToken !== fencingToken)
      throw new CommandFailure(
        `${label} changed since it was inspected: its fencing token is ${fencingToken}, not ${flags.fencingToken}; nothing was changed.`,
      );
    const stop = spec.check?.(view);
    if (stop !== undefined) throw new CommandFailure(stop);
    const result = await runOperatorAction(tools, spec.plan(view.version), actorOf(flags));
    if (result.done) {
      output(flags, ...spec.done);
      return;
    }
    if (result.why === 'not-resumable')
      throw new CommandFailure(
        `${label} cannot run again (a transparent route, or its input is gone); resolve it with "retrysafe resolve".`,
      );
    const now = await operators.operation(identity);
    throw new CommandFailure(
      now?.state === 'in_progress' && now.fencingToken === fencingToken
        ? leaseHeld(label)
        : `${label} changed while the command ran; nothing was changed. Inspect it again before you decide.`,
    );
  });
}

/** The command that resumes an operation left in progress, as an operator runs it. */
const RECOVER = 'run "retrysafe recover --module <your operations module> --database-url <url>"';

/**
 * Why an operation in another state is left alone; for one in progress that
 * no attempt runs, what resumes it, with a stable code.
 */
function notInState(label: string, view: OperationView, states: readonly RecordState[]): CommandFailure {
  const not = `not ${states.join(' or ')}; nothing was changed.`;
  if (view.state === 'in_progress' && view.notBefore !== undefined && view.notBefore.getTime() > Date.now())
    return new CommandFailure(
      `${label} is in_progress and backing off after ${view.failures} failed attempts (last error: ${view.lastError ?? 'not recorded'}) until ${view.notBefore.toISOString()}, ${not} The recovery worker resumes it then: ${RECOVER}.`,
      'backing-off',
    );
  if (view.state === 'in_progress' && view.leaseExpiresAt !== undefined && view.leaseExpiresAt.getTime() <= Date.now())
    return new CommandFailure(
      `${label} is in_progress and its lease expired, ${not} The recovery worker resumes it: ${RECOVER}.`,
      'lease-expired',
    );
  return new CommandFailure(`${label} is ${view.state}, ${not}`);
}

/** Why an operation whose attempt holds its lease is left alone. */
export function leaseHeld(label: string): string {
  return `${label} is in_progress and its lease is still held: an attempt may be running it; nothing was changed.`;
}

/**
 * Runs an action on an outbox message or a webhook event through
 * `runOperatorAction`, only on the version given, and records who and why;
 * `refused` is the failure when it is no longer parked as seen.
 */
export function actOnMessage(
  source: OperatorToolsSource,
  command: Command,
  flags: ActorFlags,
  action: Extract<OperatorAction, { action: 'requeue' | 'requeue-event' }>,
  refused: string,
  done: readonly [json: unknown, text: string],
): Promise<void> {
  // A requeue needs no configuration of the application: the default one serves.
  return source(command, flags, async (tools) => {
    const result = await runOperatorAction(tools, action, actorOf(flags));
    if (!result.done) throw new CommandFailure(refused);
    output(flags, ...done);
  });
}

/** A commander parser for a value that must say something (a reason, an actor). */
function nonBlank(value: string): string {
  if (value.trim() === '') throw new InvalidArgumentError('expected a value that is not blank.');
  return value;
}
