import { statement } from './statement.js';
import { completionAssignments } from './completion.js';

/**
 * Writes the outcome into the record claimed by this same transaction.
 * $1 tenant, $2 operation, $3 key, then the outcome from $4 (see `completionValues`).
 */
export const COMPLETE_ATOMIC = statement('retrysafe_complete_atomic', `
UPDATE retrysafe_operations
SET ${completionAssignments(4)}
WHERE tenant = $1 AND operation = $2 AND key = $3 AND state = 'in_progress'`);
