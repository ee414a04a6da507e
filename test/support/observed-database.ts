import type { SqlClient, SqlDatabase, Statement } from '../../src/store/sql-client.js';

/**
 * Sends one statement through `sql`, the runner it was issued on (the
 * database's own, or a transaction's): `around` decides what else happens
 * before and after it.
 */
export type Around = <Row>(
  text: string | Statement,
  values: readonly unknown[],
  send: () => Promise<{ readonly rows: Row[] }>,
  sql: Pick<SqlClient, 'query'>,
) => Promise<{ readonly rows: Row[] }>;

/** `database` with every statement it sends, inside a transaction or not, passed through `around`. */
export function observed<Tx>(database: SqlDatabase<Tx>, around: Around): SqlDatabase<Tx> {
  const watch = (sql: SqlClient): SqlClient => ({
    ...sql,
    query: <Row>(text: string | Statement, values: readonly unknown[] = []) =>
      around<Row>(text, values, () => sql.query<Row>(text, values), sql),
  });
  return {
    ...database,
    query: watch(database as unknown as SqlClient).query,
    transaction: (work, opening) => database.transaction((sql, tx, opened) => work(watch(sql), tx, opened), opening),
  };
}
