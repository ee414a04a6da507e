/**
 * Writes the outcome into the record claimed by this same transaction.
 *
 * $1 tenant, $2 operation, $3 key, $4 state, $5 status, $6 headers, $7 body,
 * $8 resource, $9 response seconds, $10 tombstone seconds, $11 body omitted.
 */
export const COMPLETE_ATOMIC = `
UPDATE retrysafe_operations
SET state = $4,
    response_status = $5,
    response_headers = $6,
    response_body = $7,
    resource_ref = $8,
    response_omitted = $11,
    finished_at = now(),
    response_expires_at = now() + make_interval(secs => $9),
    expires_at = now() + make_interval(secs => $10)
WHERE tenant = $1 AND operation = $2 AND key = $3 AND state = 'in_progress'`;
