import { RECORD_COLUMNS } from './record-row.js';

/**
 * Claims an identity inside the caller's transaction, or returns the record
 * that holds it, in one round trip. `set_config(..., true)` bounds the wait
 * behind a concurrent claim for this transaction only.
 *
 * At READ COMMITTED, a conflicting row committed while this statement waited is
 * not in its snapshot, so the second branch can come back empty: the caller
 * then reads the record in a new statement (`READ_RECORD`).
 *
 * $1 tenant, $2 operation, $3 key, $4 fingerprint, $5 lock_timeout (e.g. '3000ms').
 */
export const CLAIM_ATOMIC = `
WITH claimed AS (
  INSERT INTO retrysafe_operations AS o (tenant, operation, key, fingerprint, state)
  SELECT $1, $2, $3, $4, 'in_progress'
  FROM (SELECT set_config('lock_timeout', $5, true)) AS bounded_wait
  ON CONFLICT (tenant, operation, key) DO NOTHING
  RETURNING ${RECORD_COLUMNS}
)
SELECT true AS claimed, * FROM claimed
UNION ALL
SELECT false, ${RECORD_COLUMNS}
FROM retrysafe_operations AS o
WHERE o.tenant = $1 AND o.operation = $2 AND o.key = $3 AND NOT EXISTS (SELECT FROM claimed)`;

/** $1 tenant, $2 operation, $3 key. */
export const READ_RECORD = `
SELECT ${RECORD_COLUMNS}
FROM retrysafe_operations AS o
WHERE o.tenant = $1 AND o.operation = $2 AND o.key = $3`;
