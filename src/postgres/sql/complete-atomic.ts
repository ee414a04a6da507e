import { statement } from './statement.js';
import { outcomeAssignments } from './outcome.js';

/**
 * Writes the outcome into the record claimed by this same transaction.
 * $1 tenant, $2 operation, $3 key, then the outcome from $4 (see `outcomeValues`).
 */
export const COMPLETE_ATOMIC = statement('retrysafe_complete_atomic', `
UPDATE retrysafe_operations
SET ${outcomeAssignments(4)}
WHERE tenant = $1 AND operation = $2 AND key = $3 AND state = 'in_progress'`);
