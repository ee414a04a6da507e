import type { ActionConfig, OperatorTools } from '../operator/operator-tools.js';
import { postgresOperatorTools } from '../postgres/postgres-operator-tools.js';
import type { SqlDatabase } from '../store/sql-client.js';

/**
 * Where the console's stores come from: the operator seam itself (`tools`),
 * or a PostgreSQL database it is built on (`database`, with the application's
 * `config` for resolving and retrying: its policy, retention and store, so an
 * encrypted store seals a resolved body; default
 * `idempotency({ store: postgresStore(database) })`).
 */
export type ConsoleStores<Tx> =
  | { readonly tools: OperatorTools<Tx>; readonly database?: never; readonly config?: never }
  | { readonly database: SqlDatabase<Tx>; readonly config?: ActionConfig<Tx>; readonly tools?: never };

/** The console's one way to its stores: the seam given, else the seam on PostgreSQL. */
export function consoleTools<Tx>(stores: ConsoleStores<Tx>): OperatorTools<Tx> {
  return stores.tools ?? postgresOperatorTools(stores.database, stores.config);
}
