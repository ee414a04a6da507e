import { existsSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe } from 'vitest';
import { distribute, fromPg, migrate } from '../../src/postgres/index.js';
import { type Cluster, createCluster } from '../faults/support/cluster.js';
import { waitFor } from './wait-for.js';

/** Where Debian's PostgreSQL 15 keeps its extensions' libraries. */
const PG_LIB = process.env.PG_LIB ?? '/usr/lib/postgresql/15/lib';

/** The library `shared_preload_libraries = 'citus'` loads. */
export const CITUS_LIBRARY = join(PG_LIB, 'citus.so');

/** Why Citus cannot run on this machine, or undefined when it can. */
export function citusMissing(): string | undefined {
  return existsSync(CITUS_LIBRARY)
    ? undefined
    : `Citus is not installed (${CITUS_LIBRARY} is missing): .ci/run installs it before the Citus suite.`;
}

/**
 * A Citus cluster the test owns: a coordinator and two workers, each a
 * PostgreSQL 15 cluster in a temporary directory on a port of its own, with
 * the extension created in its `postgres` database and the workers added to
 * the coordinator. Any node takes queries: Citus syncs its metadata to them.
 */
export interface CitusCluster {
  readonly coordinator: Cluster;
  readonly workers: readonly [Cluster, Cluster];
  /** Every node: the coordinator first. */
  readonly nodes: readonly Cluster[];
  /** Stops every node and removes its files. */
  stop(): Promise<void>;
}

// Up to 200 clients of a storm, each a session on the node it reached and one from that node to the shard's worker.
const SETTINGS = ["shared_preload_libraries = 'citus'", 'max_connections = 500'];

/** Creates, starts and joins a coordinator and two workers. */
export async function createCitusCluster(): Promise<CitusCluster> {
  const missing = citusMissing();
  if (missing !== undefined) throw new Error(missing);
  const started = await Promise.allSettled(
    ['coordinator', 'worker1', 'worker2'].map((name) => createCluster(`citus-${name}`, SETTINGS)),
  );
  const nodes = started.flatMap((result) => (result.status === 'fulfilled' ? [result.value] : []));
  const stop = async () => {
    await Promise.all(nodes.map((node) => node.dispose()));
  };
  const failed = started.find((result) => result.status === 'rejected');
  if (failed !== undefined) {
    await stop();
    throw failed.reason;
  }
  const [coordinator, worker1, worker2] = nodes;
  if (coordinator === undefined || worker1 === undefined || worker2 === undefined) throw new Error('a node is missing');
  try {
    for (const node of nodes) await node.query('CREATE EXTENSION citus');
    await coordinator.query('SELECT citus_set_coordinator_host($1, $2)', ['127.0.0.1', coordinator.port]);
    for (const worker of [worker1, worker2])
      await coordinator.query('SELECT citus_add_node($1, $2)', ['127.0.0.1', worker.port]);
    // Workers route queries only once the coordinator's metadata reached them.
    await waitFor(
      async () =>
        (
          await coordinator.query<{ synced: boolean }>(
            'SELECT bool_and(metadatasynced) AS synced FROM pg_dist_node WHERE isactive',
          )
        )[0]?.synced === true,
      { what: 'the workers to have the metadata', limitMs: 120_000 },
    );
  } catch (error) {
    await stop();
    throw error;
  }
  return { coordinator, workers: [worker1, worker2], nodes, stop };
}

/**
 * `describe` for a file that needs Citus. Under CI=true a missing Citus fails
 * the file; elsewhere the file is skipped with the reason printed.
 */
export function describeCitus(name: string, body: () => void): void {
  const missing = citusMissing();
  if (missing !== undefined && process.env.CI !== 'true') {
    console.warn(`Skipping "${name}": ${missing}`);
    describe.skip(name, body);
    return;
  }
  describe(name, body);
}

/**
 * One cluster for the file that calls this inside `describeCitus`: created
 * before its first test, stopped and removed after its last. The getter
 * throws when called before the cluster is up.
 */
export function sharedCitusCluster(): () => CitusCluster {
  let cluster: CitusCluster | undefined;
  beforeAll(async () => {
    cluster = await createCitusCluster();
  }, 300_000);
  afterAll(async () => {
    await cluster?.stop();
  }, 120_000);
  return () => {
    if (cluster === undefined) throw new Error('the Citus cluster is not up yet');
    return cluster;
  };
}

/** The application's table of the Citus suites: the orders `test/support/apps.ts`'s routes insert, keyed by tenant. */
export const CITUS_ORDERS_TABLE = `CREATE TABLE orders (
  id bigserial,
  tenant text NOT NULL,
  sku text NOT NULL,
  qty int NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant, id)
)`;

/**
 * A pool on one node of the cluster, which answers no idle client's error as
 * a failure of the test: a node stopping, or Citus ending a connection,
 * sends an idle client 57P01, which a pool without a listener throws.
 */
export function nodePool(url: string, max = 20): pg.Pool {
  const pool = new pg.Pool({ connectionString: url, max });
  pool.on('error', () => {});
  return pool;
}

/**
 * What a team runs once on the coordinator: `migrate`, the application's
 * orders distributed by tenant, then `distribute` colocated with them.
 */
export async function installRetrysafe(cluster: CitusCluster): Promise<void> {
  const pool = nodePool(cluster.coordinator.url(), 2);
  try {
    const database = fromPg(pool);
    await migrate(database);
    await pool.query(CITUS_ORDERS_TABLE);
    await pool.query("SELECT create_distributed_table('orders', 'tenant')");
    await distribute(database, { colocateWith: 'orders' });
  } finally {
    await pool.end();
  }
}

/** The shard of `table` that holds `tenant`, and the port of the worker it is on. */
export async function shardOf(
  cluster: CitusCluster,
  tenant: string,
  table = 'retrysafe_operations',
): Promise<{ readonly shard: string; readonly port: number }> {
  const [row] = await cluster.coordinator.query<{ shard: string; port: number }>(
    `SELECT shardid::text AS shard, nodeport AS port FROM pg_dist_shard_placement
     WHERE shardid = get_shard_id_for_distribution_column($1::regclass, $2::text)`,
    [table, tenant],
  );
  if (row === undefined) throw new Error(`no placement of ${table} for ${tenant}`);
  return row;
}

/** The port of the worker that holds `tenant`'s shard of `table`. */
export async function workerOf(cluster: CitusCluster, tenant: string, table = 'retrysafe_operations'): Promise<number> {
  return (await shardOf(cluster, tenant, table)).port;
}
