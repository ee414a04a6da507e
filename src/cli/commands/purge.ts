import type { Command } from 'commander';
import { identityLabel } from '../database-command.js';
import { actOnOperation, leaseHeld, operationActionCommand, type OperationActionFlags } from '../operator-action.js';
import type { OperatorToolsSource } from '../operator-tools-source.js';

interface PurgeFlags extends OperationActionFlags {
  readonly yes?: boolean;
}

/** `retrysafe purge <tenant> <operation> <key>`: an operator deletes a record, once told what that means. */
export function registerPurge(program: Command, source: OperatorToolsSource): Command {
  return operationActionCommand(program, 'purge', 'why, for the audit trail: why the key must be forgotten')
    .description(
      "Delete an operation's record and steps: a late retry of the key then runs the operation again, and its effect happens twice. Refused without --yes. Recorded with who and why.",
    )
    .option('--yes', 'purge it: you know that a late retry of the key runs the operation again')
    .action((tenant: string, operation: string, key: string, flags: PurgeFlags, command: Command) => {
      const identity = { tenant, operation, key };
      const label = identityLabel(identity);
      return actOnOperation(source, command, flags, identity, {
        check: (view) => {
          // The statement refuses it too; said here before the question of --yes.
          if (view.state === 'in_progress' && (view.leaseExpiresAt?.getTime() ?? 0) > Date.now())
            return leaseHeld(label);
          if (flags.yes === true) return undefined;
          return `purging ${label} (${view.state}) deletes its record and steps: a retry of the key that arrives later is a new operation, so it runs again and its effect happens twice. Nothing was deleted; pass --yes to purge it.`;
        },
        plan: (seen) => ({ action: 'purge', identity, seen }),
        done: [
          { purged: true },
          `Purged ${label}: the key is unknown again, and a late retry of it runs the operation again.`,
        ],
      });
    });
}
