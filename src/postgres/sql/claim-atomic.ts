import type { ClaimRequest } from '../../store/atomic-store.js';
import { statement } from './statement.js';
import { ids } from './record-row.js';

/**
 * The first statement of an atomic transaction, sent with BEGIN:
 * `retrysafe_claim_lock` (migration 0014) sets `statement_timeout` for the
 * rest of the transaction to the smaller of `statementTimeoutMs` and the
 * session's, so a DBA's tighter limit on the role still applies, and tries
 * the identity's transaction-scoped advisory lock without waiting; then the
 * statement asks whether a record holds the identity. The lock's key is a
 * digest of the identity (`retrysafe_lock_key`), so no tenant can choose keys
 * that take another's lock. Writes nothing: the record is written once,
 * finished, by `COMPLETE_ATOMIC` with the commit. A duplicate never waits
 * here, holding a connection: when the lock is held and no record exists, the
 * attempt rolls back and waits outside the database (`postgres-store.ts`).
 *
 * `retrysafe_operation_exists` (migrations 0012 and 0019) asks after the
 * lock, with a snapshot of its own: the statement's snapshot is taken before
 * the lock and would miss a record committed by the holder that has just let
 * go of it. `OFFSET 0` keeps the lock in a subquery of its own, so it is
 * tried before the outer row asks. The `LIMIT 0` subquery reads nothing (its
 * scan is never executed) and is there for a distributed PostgreSQL (Citus):
 * it names the operation table filtered on the tenant, so that Citus routes
 * the whole statement, lock included, to the worker holding the tenant's
 * shard (test/citus/routing.test.ts). One lookup of the primary key per
 * claim, new key or replay. One row of two booleans, `locked` and `found`; a
 * found record is read by `READ_RECORD`.
 * $1 tenant, $2 operation, $3 key,
 * $4 the most statement_timeout for the rest of the transaction may be (e.g. '30000ms', or null for the session's).
 */
export const CLAIM_ATOMIC = statement(
  'retrysafe_claim_atomic',
  `
SELECT claim.locked, retrysafe_operation_exists($1, $2, $3) AS found
FROM (SELECT retrysafe_claim_lock($1, $2, $3, $4) AS locked OFFSET 0) AS claim
WHERE NOT EXISTS (SELECT 1 FROM retrysafe_operations AS o WHERE o.tenant = $1 LIMIT 0)`,
);

/** The values of `CLAIM_ATOMIC` for one request. */
export function claimAtomicValues(request: ClaimRequest): unknown[] {
  return [
    ...ids(request.identity),
    request.statementTimeoutMs === undefined ? null : `${request.statementTimeoutMs}ms`,
  ];
}
