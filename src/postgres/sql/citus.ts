/**
 * Statements of the distribution on Citus (`distribute.ts`). None runs on a
 * request path: `distribute` runs them once, `checkDistribution` at start.
 */

/** retrysafe's tables keyed by tenant: distributed by it, in one colocation group. */
export const TENANT_TABLES = ['retrysafe_operations', 'retrysafe_steps'] as const;

/**
 * The tables that are not keyed by tenant, made reference tables: a copy on
 * every node, so that a client connected to any node reads and writes them,
 * and each write reaches every copy in one distributed transaction.
 */
export const REFERENCE_TABLES = [
  'retrysafe_migrations',
  'retrysafe_outbox',
  'retrysafe_inbox',
  'retrysafe_webhook_events',
  'retrysafe_activity',
  'retrysafe_operator_actions',
  'retrysafe_sweep_progress',
] as const;

/**
 * Citus distributes no table with triggers. The operation table's one trigger
 * (migration 0020) moves the sweeper's mark back for a record written with
 * its response already expired; the sweeper does not run on Citus (it refuses
 * with \`misuse\`), so the trigger has nothing to keep and goes first.
 */
export const DROP_SWEEP_MARK_TRIGGER =
  'DROP TRIGGER IF EXISTS retrysafe_operations_response_arrived_expired ON retrysafe_operations';

/** The functions the request paths call, which must exist on every node the statements run on. */
export const NODE_FUNCTIONS = [
  'retrysafe_lock_key(text, text, text)',
  'retrysafe_claim_lock(text, text, text, text)',
  'retrysafe_operation_exists(text, text, text)',
] as const;

/**
 * Lets the claim's read after the lock (migration 0012's function) query the
 * shard it runs on, as migration 0019 does where Citus was installed first.
 */
export const NESTED_EXECUTION =
  'ALTER FUNCTION retrysafe_operation_exists(text, text, text) SET citus.allow_nested_distributed_execution = on';

/** Whether the database has Citus. */
export const HAS_CITUS = `SELECT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'citus') AS citus`;

/**
 * How each of the tables named in $1 is distributed: `method` 'h' (hash,
 * with `type` its distribution column's type), 'n' with `replication` 't' (a
 * reference table), or null (a table of the coordinator only); `colocation`
 * its colocation group. A name that is no table has no row.
 */
export const TABLE_DISTRIBUTION = `
SELECT name AS "table", p.partmethod AS method, p.repmodel AS replication,
       p.colocationid AS colocation, format_type(a.atttypid, a.atttypmod) AS type
FROM unnest($1::text[]) AS name
JOIN pg_class AS c ON c.oid = to_regclass(name) AND c.relkind IN ('r', 'p')
LEFT JOIN pg_dist_partition AS p ON p.logicalrelid = c.oid
LEFT JOIN pg_attribute AS a
  ON a.attrelid = c.oid AND p.partmethod = 'h' AND a.attname = column_to_column_name(p.logicalrelid, p.partkey)`;

/** Distributes one of `TENANT_TABLES` by tenant, in the colocation group of the table given ('default' for a new one). */
export const distributeByTenant = (table: string, colocateWith: string): string =>
  `SELECT create_distributed_table('${table}', 'tenant', colocate_with => '${colocateWith}')`;

/** Makes one of `REFERENCE_TABLES` a reference table. */
export const makeReference = (table: string): string => `SELECT create_reference_table('${table}')`;

/** Propagates one of `NODE_FUNCTIONS` to every node, those added later included. */
export const distributeFunction = (signature: string): string => `SELECT create_distributed_function('${signature}')`;
