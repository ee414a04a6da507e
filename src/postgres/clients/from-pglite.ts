import { openWith, type SqlClient, type SqlDatabase, type Statement } from '../../store/sql-client.js';

interface PGliteQueryable {
  query<Row>(text: string, params?: unknown[]): Promise<{ rows: Row[] }>;
  exec(script: string): Promise<unknown>;
}

/** The members of a PGlite instance that retrysafe calls. */
export interface PGliteLike<Tx extends PGliteQueryable> extends PGliteQueryable {
  transaction<T>(work: (tx: Tx) => Promise<T>): Promise<T>;
}

/**
 * An embedded PGlite database as a retrysafe database. PGlite has one
 * connection, so its transactions run one after another: a concurrent
 * duplicate waits its turn and then replays.
 */
export function fromPGlite<Tx extends PGliteQueryable>(db: PGliteLike<Tx>): SqlDatabase<Tx> {
  return {
    transaction: (work, opening) => db.transaction((tx) => openWith(pgliteSql(tx), tx, work, opening)),
    runner: pgliteSql,
    query: pgliteSql(db).query,
  };
}

function pgliteSql(target: PGliteQueryable): SqlClient {
  return {
    async query<Row>(text: string | Statement, values?: readonly unknown[]) {
      const result = await target.query<Row>(typeof text === 'string' ? text : text.text, values === undefined ? undefined : [...values]);
      return { rows: result.rows };
    },
    async exec(script: string) {
      await target.exec(script);
    },
  };
}
