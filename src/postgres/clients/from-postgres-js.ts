import { openWith, type SqlClient, type SqlDatabase, type Statement } from '../../store/sql-client.js';

/** The member of a postgres.js `sql` or transaction that retrysafe calls. */
export interface PostgresJsQueryable {
  unsafe(query: string, parameters?: unknown[], options?: { prepare?: boolean }): PromiseLike<readonly unknown[]>;
}

/** The members of a postgres.js `sql` instance that retrysafe calls. */
export interface PostgresJsLike<Tx extends PostgresJsQueryable> extends PostgresJsQueryable {
  /** The form with options: TypeScript infers `Tx` from the last of postgres.js' overloads, which is this one. */
  begin<T>(options: string, work: (tx: Tx) => Promise<T>): PromiseLike<unknown>;
}

/**
 * A postgres.js instance as a retrysafe database. Route handlers receive the
 * `sql.begin` transaction (`TransactionSql`); retrysafe's named statements are
 * sent as prepared statements, which postgres.js caches per connection.
 */
export function fromPostgresJs<Tx extends PostgresJsQueryable>(sql: PostgresJsLike<Tx>): SqlDatabase<Tx> {
  return {
    async transaction(work, opening) {
      let result: { readonly value: Awaited<ReturnType<typeof work>> } | undefined;
      await sql.begin('read write isolation level read committed', async (tx) => {
        result = { value: await openWith(postgresJsRunner(tx), tx, work, opening) };
      });
      if (result === undefined) throw new Error('postgres.js committed a transaction whose work did not finish.');
      return result.value;
    },
    runner: postgresJsRunner,
    query: postgresJsRunner(sql).query,
  };
}

/** retrysafe's statement runner over a postgres.js transaction, for `enqueue(postgresJsRunner(tx), …)`. */
export function postgresJsRunner(target: PostgresJsQueryable): SqlClient {
  async function query<Row>(text: string | Statement, values?: readonly unknown[]) {
    const named = typeof text !== 'string';
    const rows = await target.unsafe(named ? text.text : text, values === undefined ? [] : [...values], {
      prepare: named,
    });
    return { rows: [...rows] as Row[] };
  }
  return {
    query,
    async exec(script: string) {
      await target.unsafe(script);
    },
    // postgres.js sends each statement at once, in order, and `sql.begin` sends COMMIT behind them.
    withCommit: query,
  };
}
