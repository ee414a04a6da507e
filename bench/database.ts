import pg from 'pg';
import { fromPg, migrate, portable } from '../src/postgres/index.js';
import { ORDERS_TABLE } from './server/orders.js';
import { INSERT_CARTS, SERVICE_TENANT } from './server/service.js';

/** Which endpoint a scenario serves: the bench's one-INSERT `POST /orders`, or the reference service's `POST /v1/orders`. */
export type Endpoint = 'orders' | 'service';

/** The orders created under one key prefix: how many, for how many keys, and how many keys got more than one. */
export interface OrderCensus {
  readonly rows: number;
  readonly keys: number;
  readonly duplicatedKeys: number;
  readonly maxPerKey: number;
}

/** Row updates on a table since the database was created, and how many were HOT (no new index entries). */
export interface UpdateStats {
  readonly table: string;
  readonly updates: number;
  readonly hotUpdates: number;
}

/** The database every scenario of a run shares, created afresh for the run. */
export interface BenchDatabase {
  readonly url: string;
  readonly serverVersion: string;
  /** Empties the orders and every retrysafe table, so each scenario starts from the same state. */
  reset(): Promise<void>;
  census(keyPrefix: string, endpoint: Endpoint): Promise<OrderCensus>;
  /** Carts `${prefix}0` … for the reference service to order, one per key of a load. */
  createCarts(prefix: string, count: number): Promise<void>;
  /** Tables with updates: the completion of an atomic operation is an UPDATE of its record. */
  updateStats(): Promise<UpdateStats[]>;
  close(): Promise<void>;
}

/** A new database `name` on the server of `adminUrl`, migrated, with the reference service's tables too. */
export async function freshDatabase(adminUrl: string, name: string): Promise<BenchDatabase> {
  await withClient(adminUrl, async (admin) => {
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await admin.query(`CREATE DATABASE ${name}`);
  });
  const target = new URL(adminUrl);
  target.pathname = `/${name}`;
  const url = target.toString();
  const pool = new pg.Pool({ connectionString: url, max: 2 });
  // An idle connection the database drops when it is removed (DROP DATABASE … WITH (FORCE)) is no failure of a run.
  pool.on('error', () => {});
  await migrate(fromPg(pool));
  // Imported here, not at the top: the service's schema module loads retrysafe's compiled package, which run.ts builds
  // from the sources only after every static import has loaded (a static import gave the build before, and its schema).
  const { prepareDatabase } = await import('../examples/orders/data/schema.js');
  await prepareDatabase(portable(fromPg(pool)));
  await pool.query(ORDERS_TABLE);
  const tables = (
    await pool.query<{ name: string }>(
      "SELECT tablename AS name FROM pg_tables WHERE schemaname = 'public' AND tablename <> 'retrysafe_migrations'",
    )
  ).rows.map((row) => row.name);
  const version =
    (await pool.query<{ server_version: string }>('SHOW server_version')).rows[0]?.server_version ?? 'unknown';
  return {
    url,
    serverVersion: version,
    async reset() {
      await pool.query(`TRUNCATE ${tables.join(', ')}`);
    },
    async census(keyPrefix, endpoint) {
      // The service's orders name their key only through their cart, one per key.
      const [table, column] = endpoint === 'orders' ? ['bench_orders', 'idem_key'] : ['orders', 'cart_id'];
      const { rows } = await pool.query<OrderCensus>(
        `SELECT coalesce(sum(n), 0)::int AS rows, count(*)::int AS keys,
                count(*) FILTER (WHERE n > 1)::int AS "duplicatedKeys", coalesce(max(n), 0)::int AS "maxPerKey"
         FROM (SELECT count(*) AS n FROM ${table} WHERE left(${column}, length($1)) = $1 GROUP BY ${column}) AS per_key`,
        [keyPrefix],
      );
      const [census] = rows;
      if (census === undefined) throw new Error('census returned no row');
      return census;
    },
    async createCarts(prefix, count) {
      await pool.query(INSERT_CARTS, [SERVICE_TENANT, prefix, count]);
    },
    async updateStats() {
      const { rows } = await pool.query<UpdateStats>(
        'SELECT relname AS "table", n_tup_upd::int AS updates, n_tup_hot_upd::int AS "hotUpdates" FROM pg_stat_user_tables WHERE n_tup_upd > 0 ORDER BY relname',
      );
      return rows;
    },
    close: () => pool.end(),
  };
}

/** `work` on a client of its own, connected to `url`, ended after it. */
export async function withClient<T>(url: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}
