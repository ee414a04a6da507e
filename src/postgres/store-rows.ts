import type { SqlDatabase, Statement } from '../store/sql-client.js';
import { isRetrysafeError, RetrysafeError } from '../core/errors.js';
import { FEATURE_NOT_SUPPORTED, SERIALIZATION_FAILURE, sqlState } from './sqlstate.js';
import { unavailable } from './transaction.js';

/**
 * How often a statement that lost a serialization race is sent again. Each
 * try takes a new snapshot, in which the row it raced with is committed.
 */
const SERIALIZATION_TRIES = 5;

/**
 * Runs one statement outside any transaction; a failure becomes
 * `RetrysafeError('store-unavailable')`. Under a database default of
 * REPEATABLE READ or SERIALIZABLE a statement of its own can fail with a
 * serialization failure where READ COMMITTED would have seen the concurrent
 * row: nothing of it was applied, so it is sent again.
 */
export function storeRows<Row>(
  database: Pick<SqlDatabase<unknown>, 'query'>,
  text: string | Statement,
  values: readonly unknown[],
): Promise<Row[]> {
  return sendRows<Row>(database, text, values, 1);
}

/** `storeRows`' try number `tries`, chained rather than awaited: one promise a statement that succeeds. */
function sendRows<Row>(
  database: Pick<SqlDatabase<unknown>, 'query'>,
  text: string | Statement,
  values: readonly unknown[],
  tries: number,
): Promise<Row[]> {
  let sent: Promise<{ readonly rows: Row[] }>;
  try {
    sent = database.query<Row>(text, values);
  } catch (error) {
    // A data layer that threw before it returned a promise fails as if it had rejected.
    // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors
    sent = Promise.reject(error);
  }
  return sent.then(
    (result) => result.rows,
    (error: unknown) => {
      if (tries < SERIALIZATION_TRIES && sqlState(error) === SERIALIZATION_FAILURE)
        return sendRows<Row>(database, text, values, tries + 1);
      throw unavailable(error);
    },
  );
}

/** Runs one batch of a prune statement (`$1` seconds, `$2` batch size, one `count` back); how many rows went. */
export async function pruneBatch(
  database: Pick<SqlDatabase<unknown>, 'query'>,
  text: string,
  olderThanSeconds: number,
  batchSize: number,
): Promise<number> {
  const [row] = await storeRows<{ count: number }>(database, text, [olderThanSeconds, batchSize]);
  return row?.count ?? 0;
}

/** Runs one conditional write as `storeRows` does: whether it changed a row (it returns one per row it changed). */
export async function storeChanged(
  database: Pick<SqlDatabase<unknown>, 'query'>,
  text: string | Statement,
  values: readonly unknown[],
): Promise<boolean> {
  return (await storeRows(database, text, values)).length > 0;
}

/**
 * For a store error whose cause is a statement the server cannot run at all (SQLSTATE 0A000; Citus, for a shape it
 * does not run on a distributed retrysafe_operations): it fails every time alike, so it becomes a misuse that says
 * `what` cannot run, the server's reason and `why`, rather than an outage. Any other error is rethrown as it is.
 */
export function refusedShape(what: string, why: string): (error: unknown) => never {
  return (error) => {
    const cause = isRetrysafeError(error) ? error.cause : error;
    if (sqlState(cause) !== FEATURE_NOT_SUPPORTED) throw error;
    const reason = cause instanceof Error ? cause.message : String(cause);
    throw new RetrysafeError('misuse', `${what} cannot run on this database (${reason}): ${why}`, { cause });
  };
}
