import type { Completion } from '../../core/completion.js';
import type { ClaimRequest } from '../../store/atomic-store.js';
import { statement } from './statement.js';
import { completionInsert, completionValues } from './completion.js';
import { ids } from './record-row.js';

const completion = completionInsert(6);

/**
 * Writes the finished record, once, as the last statement of the atomic
 * transaction (sent with COMMIT where the driver pipelines). No ON CONFLICT:
 * the primary key decides, and an attempt that lost must fail here, so that
 * its transaction, handler's writes included, cannot commit even when COMMIT
 * was already on its way.
 * $1 tenant, $2 operation, $3 key, $4 fingerprint, $5 principal digest (or null), then the completion from $6 (see `completionValues`).
 */
export const COMPLETE_ATOMIC = statement(
  'retrysafe_complete_atomic',
  `
INSERT INTO retrysafe_operations (tenant, operation, key, fingerprint, principal, ${completion.columns})
VALUES ($1, $2, $3, $4::bytea, $5::bytea, ${completion.values})`,
);

/** The values of `COMPLETE_ATOMIC` for one request and its completion. */
export function completeAtomicValues(request: ClaimRequest, completion: Completion): unknown[] {
  return [...ids(request.identity), request.fingerprint, request.principal ?? null, ...completionValues(completion)];
}
