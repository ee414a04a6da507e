import { statement } from './statement.js';
import { claimOrRead, RECORD_COLUMNS } from './record-row.js';

/**
 * Claims an identity inside the caller's transaction, or returns the record
 * that holds it. `set_config(..., true)` bounds the wait behind a concurrent
 * claim for this transaction only.
 * $1 tenant, $2 operation, $3 key, $4 fingerprint, $5 lock_timeout (e.g. '3000ms').
 */
export const CLAIM_ATOMIC = statement('retrysafe_claim_atomic', claimOrRead(`
  INSERT INTO retrysafe_operations AS o (tenant, operation, key, fingerprint, state)
  SELECT $1, $2, $3, $4, 'in_progress'
  FROM (SELECT set_config('lock_timeout', $5, true)) AS bounded_wait`));

/** $1 tenant, $2 operation, $3 key. */
export const READ_RECORD = statement('retrysafe_read_record', `
SELECT ${RECORD_COLUMNS}
FROM retrysafe_operations AS o
WHERE o.tenant = $1 AND o.operation = $2 AND o.key = $3`);
