import { RetrysafeError } from '../core/errors.js';
import type { SqlClient } from '../store/sql-client.js';
import {
  distributeByTenant,
  distributeFunction,
  DROP_SWEEP_MARK_TRIGGER,
  HAS_CITUS,
  makeReference,
  NESTED_EXECUTION,
  NODE_FUNCTIONS,
  REFERENCE_TABLES,
  TABLE_DISTRIBUTION,
  TENANT_TABLES,
} from './sql/citus.js';

/** Where retrysafe's tables are to live on a distributed PostgreSQL (Citus). */
export interface DistributeOptions {
  /**
   * The application's table, already distributed by a `text` tenant column,
   * whose colocation group retrysafe's tenant tables join, so that an atomic
   * operation (claim, the handler's writes, the record) runs on one worker.
   * Without it they start a group of their own, which the application's
   * tables then join with `colocate_with => 'retrysafe_operations'`.
   */
  readonly colocateWith?: string;
}

/** What `distribute` did. */
export interface DistributionResult {
  /** The tables it distributed by tenant, or made reference tables, in this call. */
  readonly distributed: readonly string[];
}

/** What distributing needs of a database: one statement at a time, each on its own. */
type Querier = Pick<SqlClient, 'query'>;

/** A table name, optionally schema-qualified, that can be quoted as an SQL literal as it is. */
const TABLE_NAME = /^[A-Za-z_][A-Za-z0-9_$]*(\.[A-Za-z_][A-Za-z0-9_$]*)?$/;

/**
 * The statements `distribute` runs on a database without any retrysafe table
 * distributed, for teams whose migration tool owns the schema
 * (`retrysafe schema --citus`).
 */
export function distributionSql(options: DistributeOptions = {}): string {
  const colocateWith = colocationOf(options);
  return `${[
    DROP_SWEEP_MARK_TRIGGER,
    ...TENANT_TABLES.map((table, index) =>
      distributeByTenant(table, index === 0 ? (colocateWith ?? 'default') : TENANT_TABLES[0]),
    ),
    ...REFERENCE_TABLES.map(makeReference),
    NESTED_EXECUTION,
    ...NODE_FUNCTIONS.map(distributeFunction),
  ].join(';\n')};\n`;
}

/**
 * Distributes retrysafe's tables on a Citus coordinator, after `migrate`: the
 * tenant tables by tenant, colocated with `colocateWith`; the others as
 * reference tables (docs/scaling.md says why). What is already distributed is
 * left as it is, so running it again changes nothing. Throws `misuse` when the
 * database has no Citus, or when the application's table cannot be colocated.
 */
export async function distribute(sql: Querier, options: DistributeOptions = {}): Promise<DistributionResult> {
  const colocateWith = colocationOf(options);
  const tables = await tableDistribution(sql, colocateWith);
  if (tables === undefined)
    throw new RetrysafeError('misuse', 'This database has no Citus: run CREATE EXTENSION citus on each node first.');
  if (colocateWith !== undefined) applicationTable(tables, colocateWith);
  const distributed: string[] = [];
  if (tables.get(TENANT_TABLES[0])?.method !== 'h') await sql.query(DROP_SWEEP_MARK_TRIGGER);
  for (const [index, table] of TENANT_TABLES.entries()) {
    if (tables.get(table)?.method === 'h') continue;
    await sql.query(distributeByTenant(table, index === 0 ? (colocateWith ?? 'default') : TENANT_TABLES[0]));
    distributed.push(table);
  }
  for (const table of REFERENCE_TABLES) {
    if (tables.get(table)?.method === 'n') continue;
    await sql.query(makeReference(table));
    distributed.push(table);
  }
  await sql.query(NESTED_EXECUTION);
  for (const signature of NODE_FUNCTIONS) await sql.query(distributeFunction(signature));
  await checkDistribution(sql, options);
  return { distributed };
}

/**
 * Fails with `misuse` when retrysafe's tables are distributed only in part
 * (a table the operator forgot, which would turn the first request into a
 * transaction across nodes) or, with `colocateWith`, when they are not in the
 * application table's colocation group. Passes on plain PostgreSQL, and on
 * Citus with none of retrysafe's tables distributed. `migrate` calls it; call
 * it at start with the application's table.
 */
export async function checkDistribution(sql: Querier, options: DistributeOptions = {}): Promise<void> {
  const colocateWith = colocationOf(options);
  const tables = await tableDistribution(sql, colocateWith);
  if (tables === undefined) return;
  const ours = [...TENANT_TABLES, ...REFERENCE_TABLES].filter((table) => tables.has(table));
  if (colocateWith === undefined && ours.every((table) => tables.get(table)?.method == null)) return;
  const wrong = [
    ...TENANT_TABLES.filter((table) => tables.has(table) && tables.get(table)?.method !== 'h').map(
      (table) => `${table} is not distributed by tenant`,
    ),
    ...(tables.get(TENANT_TABLES[1])?.colocation !== tables.get(TENANT_TABLES[0])?.colocation
      ? [`${TENANT_TABLES[1]} is not colocated with ${TENANT_TABLES[0]}`]
      : []),
    ...REFERENCE_TABLES.filter(
      (table) => tables.has(table) && (tables.get(table)?.method !== 'n' || tables.get(table)?.replication !== 't'),
    ).map((table) => `${table} is not a reference table`),
  ];
  if (colocateWith !== undefined) {
    const application = applicationTable(tables, colocateWith);
    if (application.colocation !== tables.get(TENANT_TABLES[0])?.colocation)
      wrong.push(`${TENANT_TABLES[0]} is not colocated with ${colocateWith}`);
  }
  if (wrong.length > 0)
    throw new RetrysafeError(
      'misuse',
      `retrysafe's tables are distributed only in part: ${wrong.join('; ')}. Run \`retrysafe distribute\` (docs/scaling.md).`,
    );
}

interface Distribution {
  readonly table: string;
  readonly method: string | null;
  readonly replication: string | null;
  readonly colocation: number | null;
  readonly type: string | null;
}

/** Each table's distribution by name, or undefined without Citus. */
async function tableDistribution(
  sql: Querier,
  colocateWith: string | undefined,
): Promise<ReadonlyMap<string, Distribution> | undefined> {
  const { rows } = await sql.query<{ citus: boolean }>(HAS_CITUS);
  if (rows[0]?.citus !== true) return undefined;
  const names = [...TENANT_TABLES, ...REFERENCE_TABLES, ...(colocateWith === undefined ? [] : [colocateWith])];
  const found = await sql.query<Distribution>(TABLE_DISTRIBUTION, [names]);
  return new Map(found.rows.map((row) => [row.table, row]));
}

function applicationTable(tables: ReadonlyMap<string, Distribution>, name: string): Distribution {
  const table = tables.get(name);
  if (table === undefined) throw new RetrysafeError('misuse', `colocateWith: there is no table ${name}.`);
  if (table.method !== 'h')
    throw new RetrysafeError(
      'misuse',
      `colocateWith: ${name} is not a distributed table; distribute it by its tenant column first: SELECT create_distributed_table('${name}', 'tenant').`,
    );
  if (table.type !== 'text')
    throw new RetrysafeError(
      'misuse',
      `colocateWith: ${name} is distributed by a column of type ${table.type ?? 'unknown'}; retrysafe's tenant is text, and Citus colocates only columns of one type.`,
    );
  return table;
}

function colocationOf(options: DistributeOptions): string | undefined {
  const name = options.colocateWith;
  if (name !== undefined && !TABLE_NAME.test(name))
    throw new RetrysafeError('misuse', `colocateWith must be a table name, optionally schema-qualified; got ${name}.`);
  return name;
}
