import { statement } from './statement.js';
import { claimOrRead, RECORD_COLUMNS } from './record-row.js';

/**
 * Claims an identity inside the caller's transaction, or returns the record
 * that holds it. `set_config(..., true)` bounds the wait behind a concurrent
 * claim for this transaction only.
 * The expiry times are those the completion will write: `now()` is the
 * transaction's start, so they come out equal, and the completion can be a
 * HOT update.
 * $1 tenant, $2 operation, $3 key, $4 fingerprint, $5 lock_timeout (e.g. '3000ms'),
 * $6 response seconds, $7 tombstone seconds (or null).
 */
export const CLAIM_ATOMIC = statement('retrysafe_claim_atomic', claimOrRead(`
  INSERT INTO retrysafe_operations AS o (tenant, operation, key, fingerprint, state, response_expires_at, expires_at)
  SELECT $1, $2, $3, $4, 'in_progress', now() + make_interval(secs => $6), now() + make_interval(secs => $7)
  FROM (SELECT set_config('lock_timeout', $5, true)) AS bounded_wait`));

/** $1 tenant, $2 operation, $3 key. */
export const READ_RECORD = statement('retrysafe_read_record', `
SELECT ${RECORD_COLUMNS}
FROM retrysafe_operations AS o
WHERE o.tenant = $1 AND o.operation = $2 AND o.key = $3`);
