import type { ClaimRequest } from '../../store/atomic-store.js';
import { statement } from './statement.js';
import { ids, RECORD_COLUMNS } from './record-row.js';

/**
 * The first statement of an atomic transaction: takes the identity's
 * transaction-scoped advisory lock, waiting up to `lock_timeout` for a
 * concurrent attempt, then looks for the record that holds the identity
 * (`retrysafe_lock_operation`, migration 0007). Writes nothing: the record is
 * written once, finished, by `COMPLETE_ATOMIC` with the commit. One row of two
 * columns, `waited` and `found`: a new key, the common case, gets no record
 * columns to describe and parse; a found record is read by `READ_RECORD` in
 * the same transaction, after the lock, so what its holder committed is in it.
 * $1 tenant, $2 operation, $3 key, $4 lock_timeout (e.g. '3000ms'),
 * $5 statement_timeout for the rest of the transaction (e.g. '30000ms', or null for the session's).
 */
export const CLAIM_ATOMIC = statement('retrysafe_lock_atomic', `
SELECT l.waited, (l.holder).state IS NOT NULL AS found
FROM retrysafe_lock_operation($1, $2, $3, $4, $5) AS l`);

/** The values of `CLAIM_ATOMIC` for one request. */
export function claimAtomicValues(request: ClaimRequest): unknown[] {
  return [...ids(request.identity), `${request.lockTimeoutMs}ms`, request.statementTimeoutMs === undefined ? null : `${request.statementTimeoutMs}ms`];
}

/** $1 tenant, $2 operation, $3 key. */
export const READ_RECORD = statement('retrysafe_read_record', `
SELECT ${RECORD_COLUMNS}
FROM retrysafe_operations AS o
WHERE o.tenant = $1 AND o.operation = $2 AND o.key = $3`);
