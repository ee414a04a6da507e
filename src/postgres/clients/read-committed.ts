import { RetrysafeError } from '../../core/errors.js';

/**
 * retrysafe's transactions run at READ COMMITTED whatever the database's
 * `default_transaction_isolation`: a duplicate that waited on the identity's
 * lock must read the record the first attempt committed meanwhile, and a
 * REPEATABLE READ or SERIALIZABLE snapshot, taken before that commit, would
 * not show it. Each data layer says so with its own option where it has one.
 */
export const BEGIN_READ_COMMITTED = 'BEGIN ISOLATION LEVEL READ COMMITTED';

/** The same, as the first statement of a transaction begun by a library that has no option for it. */
export const SET_READ_COMMITTED = 'SET TRANSACTION ISOLATION LEVEL READ COMMITTED';

/** Why a data layer's transaction is refused where its database is expected. */
export function insideTransaction(what: string): RetrysafeError {
  return new RetrysafeError(
    'misuse',
    `${what}: retrysafe opens its own transactions, at READ COMMITTED. In yours it would run at your transaction's isolation level, ` +
      "where a duplicate that waited for the first attempt's commit could not see it.",
  );
}
