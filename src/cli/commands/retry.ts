import type { Command } from 'commander';
import { retryOperation } from '../../leases/retry.js';
import {
  CommandFailure,
  databaseCommand,
  type DatabaseFlags,
  identityLabel,
  output,
  withDatabase,
} from '../database-command.js';
import { loadOperationsModule } from '../operations-module.js';

interface RetryFlags extends DatabaseFlags {
  readonly reason: string;
  readonly module?: string;
}

/** `retrysafe retry <tenant> <operation> <key>`: an operator puts an unknown operation back into recovery. */
export function registerRetry(program: Command): Command {
  return databaseCommand(program, 'retry')
    .description(
      'Put an operation whose outcome is unknown back into recovery, once the cause is fixed: the recovery worker (or a retry of the key) resumes it, reconciling the steps it started first.',
    )
    .argument('<tenant>', 'the tenant the key belongs to')
    .argument('<operation>', 'the operation name with its version, like payments.create@1')
    .argument('<key>', 'the Idempotency-Key value')
    .requiredOption('--reason <text>', 'why, for the audit trail: what was fixed')
    .option(
      '--module <path>',
      'a module whose "config(database)" gives the application\'s store; see docs/operations.md',
    )
    .action(async (tenant: string, operation: string, key: string, flags: RetryFlags, command: Command) => {
      const loaded = await loadOperationsModule(command, flags.module);
      await withDatabase(command, flags, async (database) => {
        const config = await loaded.config(database);
        const identity = { tenant, operation, key };
        const result = await retryOperation(config, identity, flags.reason);
        if (!result.retried) {
          const record = await config.store.read(identity);
          if (record === undefined) throw new CommandFailure(`no operation ${identityLabel(identity)}.`);
          throw new CommandFailure(
            result.why === 'not-resumable'
              ? `${identityLabel(identity)} cannot run again (a transparent route, or its input is gone); resolve it with "retrysafe resolve".`
              : `${identityLabel(identity)} is ${record.state}, not unknown; nothing was changed.`,
          );
        }
        output(
          flags,
          { retried: true },
          `Put ${identityLabel(identity)} back into recovery: the recovery worker or a retry of the key resumes it.`,
        );
      });
    });
}
