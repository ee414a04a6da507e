import type { ClaimRequest } from '../../store/atomic-store.js';
import { statement } from './statement.js';
import { ids } from './record-row.js';

/**
 * The first statement of an atomic transaction, sent with BEGIN: tries the
 * identity's transaction-scoped advisory lock without waiting, looks for the
 * record that holds the identity, and sets `statement_timeout` for the rest
 * of the transaction. Writes nothing: the record is written once, finished,
 * by `COMPLETE_ATOMIC` with the commit. A duplicate never waits here, holding
 * a connection: when the lock is held and no record exists, the attempt rolls
 * back and waits outside the database (`postgres-store.ts`). The lock's hash
 * is the one `retrysafe_lock_operation` (migration 0007) takes, so attempts of
 * an earlier version still exclude these. One row of two booleans, `locked`
 * and `found`; a found record is read by `READ_RECORD`.
 * $1 tenant, $2 operation, $3 key,
 * $4 statement_timeout for the rest of the transaction (e.g. '30000ms', or null for the session's).
 */
export const CLAIM_ATOMIC = statement(
  'retrysafe_claim_atomic',
  `
SELECT pg_try_advisory_xact_lock(hashtextextended($3, hashtextextended($2, hashtextextended($1, 0)))) AS locked,
  EXISTS (SELECT 1 FROM retrysafe_operations AS o WHERE o.tenant = $1 AND o.operation = $2 AND o.key = $3) AS found
FROM (SELECT set_config('statement_timeout', coalesce($4, current_setting('statement_timeout')), true)) AS timeout`,
);

/** The values of `CLAIM_ATOMIC` for one request. */
export function claimAtomicValues(request: ClaimRequest): unknown[] {
  return [
    ...ids(request.identity),
    request.statementTimeoutMs === undefined ? null : `${request.statementTimeoutMs}ms`,
  ];
}
