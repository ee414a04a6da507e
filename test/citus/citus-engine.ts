import { distribute, fromPg, migrate, portable } from '../../src/postgres/index.js';
import type { SqlClient, SqlDatabase } from '../../src/store/sql-client.js';
import { type CitusCluster, nodePool } from '../support/citus-cluster.js';
import type { Engine, EngineFactory } from '../support/engines.js';

/** An application table keyed by tenant, distributed with retrysafe's records. */
export async function distributeWithRecords(database: SqlDatabase<SqlClient>, table: string): Promise<void> {
  await database.query("SELECT create_distributed_table($1, 'tenant', colocate_with => 'retrysafe_operations')", [
    table,
  ]);
}

/** The coordinator's `postgres` database, migrated and distributed, through node-postgres. */
export function citusEngine(cluster: () => CitusCluster): EngineFactory {
  return {
    name: 'Citus (node-postgres, coordinator)',
    async open() {
      const pool = nodePool(cluster().coordinator.url());
      const database = portable(fromPg(pool));
      await migrate(database);
      await distribute(database);
      return { database, native: fromPg(pool), concurrent: true, close: () => pool.end() } satisfies Engine;
    },
  };
}
