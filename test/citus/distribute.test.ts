import type pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { isRetrysafeError } from '../../src/core/errors.js';
import { checkDistribution, distribute, distributionSql, fromPg, migrate } from '../../src/postgres/index.js';
import { DROP_SWEEP_MARK_TRIGGER } from '../../src/postgres/sql/citus.js';
import type { SqlDatabase } from '../../src/store/sql-client.js';
import { CITUS_ORDERS_TABLE, describeCitus, nodePool, sharedCitusCluster } from '../support/citus-cluster.js';

const TENANT_TABLES = ['retrysafe_operations', 'retrysafe_steps'];
const REFERENCE_TABLES = [
  'retrysafe_activity',
  'retrysafe_inbox',
  'retrysafe_migrations',
  'retrysafe_operator_actions',
  'retrysafe_outbox',
  'retrysafe_sweep_progress',
  'retrysafe_webhook_events',
];

describeCitus("distributing retrysafe's tables on Citus", () => {
  const cluster = sharedCitusCluster();
  let pool: pg.Pool;
  let database: SqlDatabase<unknown>;

  beforeAll(async () => {
    pool = nodePool(cluster().coordinator.url(), 2);
    database = fromPg(pool);
    await migrate(database);
  });
  afterAll(async () => {
    await pool.end();
  });

  const refusal = async (work: Promise<unknown>): Promise<string> => {
    const error = await work.then(
      () => undefined,
      (failure: unknown) => failure,
    );
    if (!isRetrysafeError(error, 'misuse')) throw new Error(`expected misuse, got ${String(error)}`);
    return error.message;
  };

  it('refuses to colocate with an application table that is not distributed, or by a column of another type', async () => {
    await pool.query(CITUS_ORDERS_TABLE);
    expect(await refusal(distribute(database, { colocateWith: 'orders' }))).toMatch(
      /orders is not a distributed table/,
    );
    await pool.query('CREATE TABLE accounts (tenant uuid PRIMARY KEY)');
    await pool.query("SELECT create_distributed_table('accounts', 'tenant')");
    expect(await refusal(distribute(database, { colocateWith: 'accounts' }))).toMatch(/of type uuid; .* text/);
    expect(await refusal(distribute(database, { colocateWith: "orders'; DROP TABLE orders; --" }))).toMatch(
      /must be a table name/,
    );
  });

  it('detects a table the operator forgot at start, as misuse naming it, instead of at the first request', async () => {
    // The SQL docs/scaling.md once gave: the operation table alone, the steps forgotten.
    await pool.query(DROP_SWEEP_MARK_TRIGGER);
    await pool.query("SELECT create_distributed_table('retrysafe_operations', 'tenant')");
    const message = await refusal(migrate(database));
    expect(message).toContain('retrysafe_steps is not distributed by tenant');
    expect(message).toContain('retrysafe_outbox is not a reference table');
    expect(message).toContain('retrysafe distribute');
  });

  it('distributes the tenant tables colocated with the application and makes the rest reference tables, once', async () => {
    await pool.query("SELECT create_distributed_table('orders', 'tenant')");
    // The operation table distributed by hand above is kept: Citus put it in the group of every text column.
    const result = await distribute(database, { colocateWith: 'orders' });
    expect([...result.distributed].sort()).toEqual(['retrysafe_steps', ...REFERENCE_TABLES].sort());
    expect(await distribute(database, { colocateWith: 'orders' })).toEqual({ distributed: [] });
    await checkDistribution(database, { colocateWith: 'orders' });
    expect(await migrate(database)).toMatchObject({ applied: [] });

    const rows = await cluster().coordinator.query<{
      table: string;
      method: string;
      replication: string;
      group: number;
    }>(
      `SELECT logicalrelid::text AS table, partmethod AS method, repmodel AS replication, colocationid AS group
       FROM pg_dist_partition WHERE logicalrelid::text LIKE 'retrysafe\\_%' OR logicalrelid::text = 'orders' ORDER BY 1`,
    );
    const orders = rows.find((row) => row.table === 'orders');
    for (const table of TENANT_TABLES)
      expect(rows.find((row) => row.table === table)).toMatchObject({ method: 'h', group: orders?.group });
    for (const table of REFERENCE_TABLES)
      expect(rows.find((row) => row.table === table)).toMatchObject({ method: 'n', replication: 't' });
  });

  it('gives every node the schema version and the functions the claim calls, so clients may connect to any node', async () => {
    for (const node of cluster().nodes) {
      const [version] = await node.query<{ version: number }>(
        'SELECT max(version) AS version FROM retrysafe_migrations',
      );
      expect(version?.version).toBe((await migrate(database)).version);
      const [claim] = await node.query<{ locked: boolean }>(
        "SELECT retrysafe_claim_lock('tenant-a', 'orders.create@1', 'k', NULL) AS locked",
      );
      expect(claim?.locked).toBe(true);
    }
  });

  it('prints what it runs for a migration tool', () => {
    const sql = distributionSql({ colocateWith: 'orders' });
    expect(sql).toContain(
      "SELECT create_distributed_table('retrysafe_operations', 'tenant', colocate_with => 'orders');",
    );
    for (const table of REFERENCE_TABLES) expect(sql).toContain(`SELECT create_reference_table('${table}');`);
  });
});
