import { type Command, InvalidArgumentError, Option } from 'commander';
import { count } from '../../core/option-rules.js';
import { identityLabel, numberFlag } from '../database-command.js';
import { actOnOperation, operationActionCommand, type OperationActionFlags } from '../operator-action.js';
import type { OperatorToolsSource } from '../operator-tools-source.js';

interface ResolveFlags extends OperationActionFlags {
  readonly state: 'completed' | 'failed';
  readonly status: number;
  readonly body?: { readonly value: unknown };
  readonly location?: string;
}

/** `retrysafe resolve <tenant> <operation> <key>`: an operator resolves an operation whose outcome is unknown. */
export function registerResolve(program: Command, source: OperatorToolsSource): Command {
  return operationActionCommand(program, 'resolve', 'why, for the audit trail: what was checked and where')
    .description(
      'Resolve an operation whose outcome is unknown, after checking by hand what happened. Retries of the key get this answer from then on. Recorded with who and why.',
    )
    .addOption(
      new Option('--state <state>', 'completed: the effect happened; failed: it did not and will not')
        .choices(['completed', 'failed'])
        .makeOptionMandatory(),
    )
    .requiredOption('--status <status>', 'the HTTP status retries will get (200 to 599)', numberFlag(count(200, 599)))
    .option('--body <json>', 'the JSON body retries will get', jsonBody)
    .option('--location <url>', 'the resource the operation created, replayed as Location and kept in the tombstone')
    .option(
      '--module <path>',
      'a module whose "config(database)" gives the application\'s retention and policy; see docs/operations.md',
    )
    .action((tenant: string, operation: string, key: string, flags: ResolveFlags, command: Command) => {
      const identity = { tenant, operation, key };
      return actOnOperation(source, command, flags, identity, {
        states: ['unknown'],
        plan: (seen) => ({
          action: 'resolve',
          identity,
          seen,
          state: flags.state,
          status: flags.status,
          ...(flags.body === undefined ? {} : { body: flags.body.value }),
          ...(flags.location === undefined ? {} : { location: flags.location }),
        }),
        done: [
          { resolved: true, state: flags.state, status: flags.status },
          `Resolved ${identityLabel(identity)} as ${flags.state} with status ${flags.status}.`,
        ],
      });
    });
}

/** Wrapped, so that a JSON `null` body is told apart from no body. */
function jsonBody(value: string): { readonly value: unknown } {
  try {
    return { value: JSON.parse(value) as unknown };
  } catch {
    throw new InvalidArgumentError('expected JSON.');
  }
}
