import { idempotency } from '../modes/idempotency.js';
import type { ActionConfig, OperatorTools } from '../operator/operator-tools.js';
import type { SqlDatabase } from '../store/sql-client.js';
import { maintenanceStore } from './postgres-maintenance-store.js';
import { operatorStore } from './postgres-operator-store.js';
import { outboxStore } from './postgres-outbox-store.js';
import { postgresStore } from './postgres-store.js';

/**
 * The operator seam on PostgreSQL: the one place the console and the command
 * line get their stores from. `config` is the application's (its policy,
 * retention and decorated store); default `idempotency({ store: postgresStore(database) })`.
 */
export function postgresOperatorTools<Tx>(database: SqlDatabase<Tx>, config?: ActionConfig<Tx>): OperatorTools<Tx> {
  const maintenance = maintenanceStore(database);
  const outbox = outboxStore(database);
  return {
    operators: operatorStore(database),
    health: {
      stats: () => maintenance.stats(),
      stuck: (query) => maintenance.stuck(query),
      outboxBacklog: () => outbox.backlog(),
    },
    config: config ?? idempotency({ store: postgresStore(database) }),
  };
}
