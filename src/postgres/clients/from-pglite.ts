import { openWith, type SqlClient, type SqlDatabase, type Statement } from '../../store/sql-client.js';
import { SET_READ_COMMITTED } from './read-committed.js';

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
    // PGlite sends BEGIN itself; in process, the statement after it costs no round trip.
    transaction: (work, opening) =>
      db.transaction(async (tx) => {
        await tx.exec(SET_READ_COMMITTED);
        return openWith(pgliteSql(tx), tx, work, opening);
      }),
    runner: pgliteSql,
    query: pgliteSql(db).query,
  };
}

function pgliteSql(target: PGliteQueryable): SqlClient {
  return {
    async query<Row>(text: string | Statement, values?: readonly unknown[]) {
      const result = await target.query<Row>(
        typeof text === 'string' ? text : text.text,
        values === undefined ? undefined : [...values],
      );
      return { rows: result.rows };
    },
    async exec(script: string) {
      await target.exec(script);
    },
  };
}
