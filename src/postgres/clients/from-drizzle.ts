import { openWith, type SqlClient, type SqlDatabase, type Statement } from '../../store/sql-client.js';
import { insideTransaction } from './read-committed.js';

/**
 * What Drizzle's `sql` template builds, as far as `execute` reads it: the
 * text with `$n` placeholders and its values. Written out so that retrysafe
 * need not import Drizzle.
 */
export interface DrizzleRawQuery {
  getSQL(): DrizzleRawQuery;
  toQuery(): { readonly sql: string; readonly params: unknown[] };
}

/** A column's type as each driver reports it: node-postgres and PGlite `fields`, postgres.js `columns`. */
interface ColumnType {
  readonly name: string;
  readonly dataTypeID?: number;
  readonly type?: number;
}

/** What `execute` resolves to: node-postgres' and PGlite's result, or postgres.js' row list. */
type DrizzleResult = { readonly rows: readonly unknown[]; readonly fields?: readonly ColumnType[] } | RowList;

/** postgres.js' result: the rows, with their columns' types. */
interface RowList extends ReadonlyArray<unknown> {
  readonly columns?: readonly ColumnType[];
}

/** The member of a Drizzle database or transaction that retrysafe calls. */
export interface DrizzleQueryable {
  execute(query: string | { getSQL(): unknown }): PromiseLike<DrizzleResult>;
}

/** The members of a Drizzle database (node-postgres, postgres.js or PGlite driver) that retrysafe calls. */
export interface DrizzleLike<Tx extends DrizzleQueryable> extends DrizzleQueryable {
  transaction<T>(work: (tx: Tx) => Promise<T>, config: { readonly isolationLevel: 'read committed' }): Promise<T>;
}

/**
 * A Drizzle database as a retrysafe database. Route handlers receive
 * Drizzle's `tx`. Drizzle rolls back when the callback throws, and
 * `tx.rollback()` is such a throw: in a handler it rolls back the operation
 * record with the handler's writes, and the request fails with Drizzle's error.
 * Drizzle's PGlite driver runs one statement per query: run `migrate` with
 * `fromPGlite(client)` there, or put `retrysafe schema` in your migrations.
 * It takes the database, not a transaction (Drizzle's `tx` has `rollback`).
 */
export function fromDrizzle<Tx extends DrizzleQueryable>(db: DrizzleLike<Tx>): SqlDatabase<Tx> {
  if ('rollback' in db) throw insideTransaction('fromDrizzle(db) takes the Drizzle database, not a transaction');
  return {
    transaction: (work, opening) =>
      db.transaction((tx) => openWith(drizzleRunner(tx), tx, work, opening), READ_COMMITTED),
    runner: drizzleRunner,
    query: drizzleRunner(db).query,
  };
}

/** Drizzle's node-postgres driver says it in BEGIN; its postgres.js and PGlite drivers send SET TRANSACTION after BEGIN. */
const READ_COMMITTED = { isolationLevel: 'read committed' } as const;

/** retrysafe's statement runner over a Drizzle transaction, for `enqueue(drizzleRunner(tx), …)`. */
export function drizzleRunner(target: DrizzleQueryable): SqlClient {
  const run = async (text: string, values: readonly unknown[]): Promise<unknown[]> => {
    const query: DrizzleRawQuery = { getSQL: () => query, toQuery: () => ({ sql: text, params: [...values] }) };
    const result = await target.execute(query);
    return isRowList(result) ? withDates(result, result.columns) : withDates(result.rows, result.fields);
  };
  return {
    async query<Row>(text: string | Statement, values?: readonly unknown[]) {
      return { rows: (await run(typeof text === 'string' ? text : text.text, values ?? [])) as Row[] };
    },
    async exec(script: string) {
      await run(script, []);
    },
  };
}

function isRowList(result: DrizzleResult): result is RowList {
  return Array.isArray(result);
}

const TIMESTAMPTZ = 1184;

/**
 * Drizzle's drivers return timestamps as PostgreSQL's text, for its own
 * columns to parse; retrysafe's statements have no Drizzle columns, so their
 * `timestamptz` values are parsed here, as the drivers themselves would.
 */
function withDates(rows: readonly unknown[], columns: readonly ColumnType[] | undefined): unknown[] {
  const stamps = (columns ?? [])
    .filter((column) => (column.dataTypeID ?? column.type) === TIMESTAMPTZ)
    .map((column) => column.name);
  if (stamps.length === 0) return [...rows];
  return rows.map((row) => {
    const copy = { ...(row as Record<string, unknown>) };
    for (const name of stamps) {
      const value = copy[name];
      if (typeof value === 'string') copy[name] = timestamptz(value);
    }
    return copy;
  });
}

/** `2026-12-01 10:09:55.029123+00` (PostgreSQL's ISO output) as a Date. */
function timestamptz(text: string): Date {
  return new Date(text.replace(' ', 'T').replace(/([+-]\d\d)$/, '$1:00'));
}
