import type { ClaimRequest } from '../../store/operation-store.js';
import { statement } from './statement.js';
import { ids, RECORD_COLUMNS } from './record-row.js';

/**
 * Claims an identity inside the caller's transaction: one row `claimed` when
 * it did, none when a committed record holds it (read with `READ_RECORD`).
 * Returning nothing else keeps the statement cheap for new keys, the common
 * case; replays are mostly answered by a read before the transaction.
 * `set_config(..., true)` bounds the wait behind a concurrent claim for this
 * transaction only.
 * The expiry times are those the completion will write: `now()` is the
 * transaction's start, so they come out equal, and the completion can be a
 * HOT update.
 * $1 tenant, $2 operation, $3 key, $4 fingerprint, $5 lock_timeout (e.g. '3000ms'),
 * $6 response seconds, $7 tombstone seconds (or null).
 * `$4::bytea`: drivers that encode a value by its parameter's type (PGlite) know bytea, not the column's domain.
 */
export const CLAIM_ATOMIC = statement('retrysafe_claim_atomic', `
INSERT INTO retrysafe_operations (tenant, operation, key, fingerprint, state, response_expires_at, expires_at)
SELECT $1, $2, $3, $4::bytea, 'in_progress', now() + make_interval(secs => $6), now() + make_interval(secs => $7)
FROM (SELECT set_config('lock_timeout', $5, true)) AS bounded_wait
ON CONFLICT (tenant, operation, key) DO NOTHING
RETURNING true AS claimed`);

/** The values of `CLAIM_ATOMIC` for one request. */
export function claimAtomicValues(request: ClaimRequest): unknown[] {
  const { retention } = request;
  return [...ids(request.identity), request.fingerprint, `${request.lockTimeoutMs}ms`, retention?.responseSeconds ?? null, retention?.tombstoneSeconds ?? null];
}

/** $1 tenant, $2 operation, $3 key. */
export const READ_RECORD = statement('retrysafe_read_record', `
SELECT ${RECORD_COLUMNS}
FROM retrysafe_operations AS o
WHERE o.tenant = $1 AND o.operation = $2 AND o.key = $3`);
