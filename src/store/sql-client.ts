/** The one thing retrysafe needs from a PostgreSQL driver: run a statement with bound values. */
export interface SqlClient {
  query<Row = Record<string, unknown>>(text: string, values?: readonly unknown[]): Promise<{ readonly rows: Row[] }>;
  /** Runs a script of several statements without bound values (migrations). */
  exec(script: string): Promise<void>;
}

/**
 * A PostgreSQL database as retrysafe sees it. `Tx` is the driver's own
 * transaction handle, handed unchanged to route handlers so their writes join
 * the operation record's transaction.
 */
export interface SqlDatabase<Tx> {
  /** Commits when `work` resolves, rolls back when it throws. */
  transaction<T>(work: (sql: SqlClient, tx: Tx) => Promise<T>): Promise<T>;
  /** One statement outside any transaction. */
  query: SqlClient['query'];
}
