import { extend } from '../../src/core/extend.js';
import type { BoundStatement, Opened, SqlClient, SqlDatabase } from '../../src/store/sql-client.js';

/**
 * The same database, counting the atomic claims that found their identity
 * held by a running attempt (the claim's `locked` came back false): a
 * duplicate then waits outside the database, where no query can see it.
 */
export function countingHeldClaims<Tx>(database: SqlDatabase<Tx>): {
  readonly database: SqlDatabase<Tx>;
  held(): number;
  /** Resolves once a claim begun after this call finds its identity held. */
  nextHeld(this: void): Promise<void>;
} {
  let held = 0;
  let waiters: (() => void)[] = [];
  return {
    database: extend(database, {
      transaction: <T>(work: (sql: SqlClient, tx: Tx, opened: Opened) => Promise<T>, opening?: BoundStatement) =>
        database.transaction((sql, tx, opened) => {
          if ('rows' in opened && (opened.rows[0] as { locked?: unknown } | undefined)?.locked === false) {
            held += 1;
            for (const wake of waiters) wake();
            waiters = [];
          }
          return work(sql, tx, opened);
        }, opening),
    }),
    held: () => held,
    nextHeld: () => new Promise<void>((resolve) => waiters.push(resolve)),
  };
}
