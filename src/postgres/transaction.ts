import { RetrysafeError } from '../core/errors.js';
import type { BoundStatement, Opened, SqlClient, SqlDatabase } from '../store/sql-client.js';
import {
  IN_FAILED_SQL_TRANSACTION,
  isTransientDatabaseError,
  LOCK_NOT_AVAILABLE,
  QUERY_CANCELED,
  sqlState,
} from './sqlstate.js';

/** Marks an error raised by retrysafe's own statements, so it is not mistaken for the handler's. */
class StoreFailure extends Error {}

/** Carries what the handler threw through the driver's rollback, to be told apart from BEGIN or COMMIT failing. */
class WorkFailure extends Error {}

/**
 * Thrown to make the driver roll back. One shared instance: building an Error
 * per rolled-back transaction would capture a stack on a hot path.
 */
const ROLLBACK = new Error('rollback');

/** How a transaction's body settles: commit its writes or roll them back, and the value it answers either way. */
export interface TransactionSettlement<T> {
  readonly commit: boolean;
  readonly value: T;
}

/**
 * Runs `body` in one transaction that commits only when it settles with
 * `commit: true`, and sorts failures: the store's own become
 * `RetrysafeError('store-unavailable')`; the handler's pass through unchanged.
 */
export async function inTransaction<Tx, T>(
  database: SqlDatabase<Tx>,
  opening: BoundStatement | undefined,
  body: (sql: SqlClient, tx: Tx, opened: Opened) => Promise<TransactionSettlement<T>>,
): Promise<T> {
  let rolledBack: { readonly value: T } | undefined;
  try {
    return await database.transaction(
      (sql, tx, opened) =>
        body(sql, tx, opened).then((settlement) => {
          if (!settlement.commit) {
            rolledBack = { value: settlement.value };
            throw ROLLBACK;
          }
          return settlement.value;
        }),
      opening,
    );
  } catch (error) {
    if (error === ROLLBACK && rolledBack !== undefined) return rolledBack.value;
    if (error instanceof WorkFailure) throw handlerFailure(error.cause);
    // Our statements, BEGIN, COMMIT or the connection itself.
    throw unavailable(error);
  }
}

/**
 * What the handler's failure means. A statement of its own that the server
 * cut for time is `statement-timeout`, not the store's failure; the
 * connection lost under it is the store's failure too, since the handler's
 * statements run on retrysafe's connection.
 */
function handlerFailure(cause: unknown): unknown {
  const code = sqlState(cause);
  if (code === QUERY_CANCELED || code === LOCK_NOT_AVAILABLE) {
    return new RetrysafeError('statement-timeout', 'A statement of the handler ran out of time on the database.', {
      cause,
    });
  }
  return isTransientDatabaseError(cause) ? unavailable(cause) : cause;
}

/** Runs the handler's part of a transaction, marking what it throws as its own. */
export function handlerPart<T>(work: () => Promise<T>): Promise<T> {
  return work().catch((error: unknown) => {
    throw error instanceof StoreFailure ? error : new WorkFailure('handler failed', { cause: error });
  });
}

/** Runs one of retrysafe's own statements, or reads what one came to, marking its failure as the store's. */
export function storePart<T>(statement: () => T | Promise<T>): Promise<T> {
  // One promise, the handler's, where an async function awaiting the statement made two.
  try {
    return Promise.resolve(statement()).catch(rethrowAsStore);
  } catch (error) {
    return Promise.reject(storeFailure(error));
  }
}

const storeFailure = (error: unknown): StoreFailure => new StoreFailure('store statement failed', { cause: error });

function rethrowAsStore(error: unknown): never {
  throw storeFailure(error);
}

/**
 * What a failure of retrysafe's own statements, BEGIN or COMMIT means. A
 * statement refused because an earlier one of the transaction failed was
 * refused for the handler's failure, which it caught and went on: not the
 * store's, and a retry of the same request fails the same way.
 */
export function unavailable(error: unknown): RetrysafeError {
  if (error instanceof RetrysafeError) return error;
  const cause = error instanceof StoreFailure ? error.cause : error;
  if (sqlState(cause) === IN_FAILED_SQL_TRANSACTION) {
    return new RetrysafeError(
      'transaction-aborted',
      'A statement of the handler failed and the handler went on without a savepoint: PostgreSQL aborted the transaction.',
      { cause },
    );
  }
  return new RetrysafeError('store-unavailable', 'The operation store failed.', { cause });
}

/** Runs `work` with the data layer's `tx` in one transaction that commits when it resolves; failures are sorted as in `inTransaction`. */
export function plainTransaction<Tx, T>(database: SqlDatabase<Tx>, work: (tx: Tx) => Promise<T>): Promise<T> {
  return inTransaction(database, undefined, (_sql, tx) =>
    handlerPart(async () => ({ commit: true, value: await work(tx) })),
  );
}
