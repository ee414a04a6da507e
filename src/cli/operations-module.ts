import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Command } from 'commander';
import { idempotency, type Idempotency } from '../modes/idempotency.js';
import type { LeasedOperation } from '../modes/leased-route.js';
import { postgresStore } from '../postgres/postgres-store.js';
import type { SqlClient, SqlDatabase } from '../store/sql-client.js';
import { describeError, usageError } from './database-command.js';

/**
 * What `--module <path>` gives the commands that complete or resolve leased
 * operations. The module's named exports, both optional:
 * - `operations`: the leased operations this process may complete (a
 *   `LeasedRoute` is one). Their handlers get retrysafe's `SqlClient` as `tx`.
 * - `config(database)`: builds the same configuration as the application
 *   (lease length, attempts, retention, policy, observers) on the command's
 *   database. Default: `idempotency({ store: postgresStore(database) })`.
 */
export interface OperationsModule {
  readonly operations: readonly LeasedOperation<unknown, SqlClient>[];
  config(this: void, database: SqlDatabase<SqlClient>): Idempotency<SqlClient> | Promise<Idempotency<SqlClient>>;
}

const defaults: OperationsModule = {
  operations: [],
  config: (database) => idempotency({ store: postgresStore(database) }),
};

/** Imports the module at `path` (relative to the working directory); a module that cannot be used is a usage error. */
export async function loadOperationsModule(command: Command, path: string | undefined): Promise<OperationsModule> {
  if (path === undefined) return defaults;
  let exports: Record<string, unknown>;
  try {
    exports = (await import(pathToFileURL(resolve(path)).href)) as Record<string, unknown>;
  } catch (error) {
    return usageError(command, `cannot load --module ${path}: ${describeError(error)}`);
  }
  const { operations = defaults.operations, config = defaults.config } = exports;
  if (!Array.isArray(operations) || !operations.every(isLeasedOperation)) {
    return usageError(
      command,
      `--module ${path}: "operations" must be an array of leased operations, each with "operation" and "handler".`,
    );
  }
  if (typeof config !== 'function')
    return usageError(command, `--module ${path}: "config" must be a function of the database.`);
  return { operations, config: config as OperationsModule['config'] };
}

function isLeasedOperation(value: unknown): value is LeasedOperation<unknown, SqlClient> {
  return (
    typeof value === 'object' &&
    value !== null &&
    'operation' in value &&
    typeof value.operation === 'string' &&
    'handler' in value &&
    typeof value.handler === 'function'
  );
}
