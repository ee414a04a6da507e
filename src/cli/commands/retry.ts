import type { Command } from 'commander';
import { identityLabel } from '../database-command.js';
import { actOnOperation, operationActionCommand, type OperationActionFlags } from '../operator-action.js';
import type { OperatorToolsSource } from '../operator-tools-source.js';

/** `retrysafe retry <tenant> <operation> <key>`: an operator puts an unknown operation back into recovery. */
export function registerRetry(program: Command, source: OperatorToolsSource): Command {
  return operationActionCommand(program, 'retry', 'why, for the audit trail: what was fixed')
    .description(
      'Put an operation whose outcome is unknown back into recovery, once the cause is fixed: the recovery worker (or a retry of the key) resumes it, reconciling the steps it started first. Recorded with who and why.',
    )
    .option(
      '--module <path>',
      'a module whose "config(database)" gives the application\'s store; see docs/operations.md',
    )
    .action((tenant: string, operation: string, key: string, flags: OperationActionFlags, command: Command) => {
      const identity = { tenant, operation, key };
      return actOnOperation(source, command, flags, identity, {
        states: ['unknown'],
        plan: (seen) => ({ action: 'retry', identity, seen }),
        done: [
          { retried: true },
          `Put ${identityLabel(identity)} back into recovery: the recovery worker or a retry of the key resumes it.`,
        ],
      });
    });
}
