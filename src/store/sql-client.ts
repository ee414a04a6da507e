/**
 * A statement run on every request: drivers that can prepare it once per
 * connection under its name do so, and skip parsing and planning it again.
 */
export interface Statement {
  readonly name: string;
  readonly text: string;
}

/** The one thing retrysafe needs from a PostgreSQL driver: run a statement with bound values. */
export interface SqlClient {
  query<Row = Record<string, unknown>>(
    this: void,
    text: string | Statement,
    values?: readonly unknown[],
  ): Promise<{ readonly rows: Row[] }>;
  /** Runs a script of several statements without bound values (migrations). */
  exec(this: void, script: string): Promise<void>;
  /**
   * Inside a transaction, where the driver can: sends the statement with the
   * transaction's COMMIT, in the same round trip. Its promise settles once
   * the statement has run, never before the work has resolved, so the work
   * must not await it; when the statement fails, COMMIT does not happen and
   * the transaction rolls back. Absent, a statement is sent on its own.
   */
  readonly withCommit?: (
    this: void,
    statement: Statement,
    values: readonly unknown[],
  ) => Promise<{ readonly rows: readonly unknown[] }>;
}

/** A statement with its values. */
export interface BoundStatement {
  readonly statement: Statement;
  readonly values: readonly unknown[];
}

/** What a transaction's opening statement came to: its rows (none without one), or its failure. */
export type Opened = { readonly rows: readonly unknown[] } | { readonly error: unknown };

/**
 * What running `opening` came to, a runner that throws before it returns a
 * promise included. Promise chains, not async functions: each async function
 * made a promise more on every transaction.
 */
export function open(sql: Pick<SqlClient, 'query'>, opening: BoundStatement | undefined): Promise<Opened> {
  if (opening === undefined) return Promise.resolve({ rows: [] });
  try {
    return sql.query(opening.statement, opening.values).then(
      ({ rows }): Opened => ({ rows }),
      (error: unknown): Opened => ({ error }),
    );
  } catch (error) {
    return Promise.resolve({ error });
  }
}

/** Runs `opening` through `sql`, then `work`: how a data layer whose transaction sends `BEGIN` itself opens one. */
export function openWith<Tx, T>(
  sql: SqlClient,
  tx: Tx,
  work: (sql: SqlClient, tx: Tx, opened: Opened) => Promise<T>,
  opening: BoundStatement | undefined,
): Promise<T> {
  return open(sql, opening).then((opened) => work(sql, tx, opened));
}

/**
 * A PostgreSQL database as retrysafe sees it. `Tx` is the driver's own
 * transaction handle, handed unchanged to route handlers so their writes join
 * the operation record's transaction.
 */
export interface SqlDatabase<Tx> {
  /**
   * Commits when `work` resolves, rolls back when it throws. `opening`, when
   * given, is the transaction's first statement, sent before `work` runs
   * (with `BEGIN`, where the driver can send both at once); what it came to
   * is `work`'s third argument. After a failed opening the transaction is
   * aborted: `work` sends nothing more and throws to roll back.
   */
  transaction<T>(work: (sql: SqlClient, tx: Tx, opened: Opened) => Promise<T>, opening?: BoundStatement): Promise<T>;
  /**
   * retrysafe's statement runner inside a transaction this database handed
   * out: what `transaction` passes `work` beside `tx`. Statements that join a
   * caller's transaction (the outbox's enqueue, the inbox's record) run through it.
   */
  runner(this: void, tx: Tx): SqlClient;
  /** One statement outside any transaction. */
  query: SqlClient['query'];
  /**
   * How long the data layer lets a transaction run before it ends it itself
   * (Prisma's interactive transactions); undefined when it never does.
   */
  readonly transactionTimeoutMs?: number | undefined;
}

/**
 * The same database, handing route handlers retrysafe's `SqlClient` instead of
 * the driver's own transaction: for code that runs on several drivers, such as
 * node-postgres in production and PGlite in development.
 */
export function portable<Tx>(database: SqlDatabase<Tx>): SqlDatabase<SqlClient> {
  return {
    transaction: (work, opening) => database.transaction((sql, _tx, opened) => work(sql, sql, opened), opening),
    runner: (sql) => sql,
    query: database.query,
    transactionTimeoutMs: database.transactionTimeoutMs,
  };
}
