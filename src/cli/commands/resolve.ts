import { type Command, InvalidArgumentError, Option } from 'commander';
import { resolveOperation } from '../../leases/resolve.js';
import {
  CommandFailure,
  databaseCommand,
  type DatabaseFlags,
  identityLabel,
  output,
  withDatabase,
} from '../database-command.js';
import { KEY_DESCRIPTION, keyArgument } from '../key-argument.js';
import { loadOperationsModule } from '../operations-module.js';

interface ResolveFlags extends DatabaseFlags {
  readonly state: 'completed' | 'failed';
  readonly status: number;
  readonly body?: { readonly value: unknown };
  readonly location?: string;
  readonly reason: string;
  readonly module?: string;
}

/** `retrysafe resolve <tenant> <operation> <key>`: an operator resolves an operation whose outcome is unknown. */
export function registerResolve(program: Command): Command {
  return databaseCommand(program, 'resolve')
    .description(
      'Resolve an operation whose outcome is unknown, after checking by hand what happened. Retries of the key get this answer from then on.',
    )
    .argument('<tenant>', 'the tenant the key belongs to')
    .argument('<operation>', 'the operation name with its version, like payments.create@1')
    .argument('<key>', KEY_DESCRIPTION, keyArgument)
    .addOption(
      new Option('--state <state>', 'completed: the effect happened; failed: it did not and will not')
        .choices(['completed', 'failed'])
        .makeOptionMandatory(),
    )
    .requiredOption('--status <status>', 'the HTTP status retries will get (200 to 599)', httpStatus)
    .option('--body <json>', 'the JSON body retries will get', jsonBody)
    .option('--location <url>', 'the resource the operation created, replayed as Location and kept in the tombstone')
    .requiredOption('--reason <text>', 'why, for the audit trail: what was checked and where')
    .option(
      '--module <path>',
      'a module whose "config(database)" gives the application\'s retention and policy; see docs/operations.md',
    )
    .action(async (tenant: string, operation: string, key: string, flags: ResolveFlags, command: Command) => {
      const loaded = await loadOperationsModule(command, flags.module);
      await withDatabase(command, flags, async (database) => {
        const config = await loaded.config(database);
        const identity = { tenant, operation, key };
        const headers: Record<string, string> = flags.location === undefined ? {} : { location: flags.location };
        const reply = { status: flags.status, body: flags.body?.value, headers };
        const result = await resolveOperation(config, identity, { state: flags.state, reply, reason: flags.reason });
        if (!result.resolved) {
          const record = await config.store.read(identity);
          throw new CommandFailure(
            record === undefined
              ? `no operation ${identityLabel(identity)}.`
              : `${identityLabel(identity)} is ${record.state}, not unknown; nothing was changed.`,
          );
        }
        output(
          flags,
          { resolved: true, state: flags.state, status: flags.status },
          `Resolved ${identityLabel(identity)} as ${flags.state} with status ${flags.status}.`,
        );
      });
    });
}

function httpStatus(value: string): number {
  if (!/^\d{3}$/.test(value) || Number(value) < 200 || Number(value) > 599)
    throw new InvalidArgumentError('expected an HTTP status from 200 to 599.');
  return Number(value);
}

/** Wrapped, so that a JSON `null` body is told apart from no body. */
function jsonBody(value: string): { readonly value: unknown } {
  try {
    return { value: JSON.parse(value) as unknown };
  } catch {
    throw new InvalidArgumentError('expected JSON.');
  }
}
