/**
 * Statements of the sweeper. Each one handles at most $1 rows, found through
 * the one index of migration 0009 on the time a finished record next
 * needs the sweeper, locked with SKIP LOCKED and reached
 * again by their physical address (ctid, stable while the row is locked), and
 * runs as its own statement: no batch waits for a request, and no request
 * waits for more than one batch. No ORDER BY: a pass drains everything that
 * expired, and without it no plan has to read every expired row to sort them.
 * Unfinished operations (`in_progress`, `unknown`) are outside both indexes
 * and never swept.
 */

/** The indexed time at which a record next needs the sweeper, exactly as the index is defined. */
export const SWEEP_AT = `(CASE WHEN state = 'tombstone' THEN expires_at ELSE response_expires_at END)`;

/**
 * Turns completed records whose response expired into tombstones: the body,
 * the headers and the recovery points go; identity, fingerprint, status and
 * resource reference stay, so a late retry is refused rather than run again.
 * $1 batch size.
 */
export const TOMBSTONE_EXPIRED = `
WITH swept AS (
  UPDATE retrysafe_operations
  SET state = 'tombstone', response_body = NULL, response_headers = NULL, input = NULL
  WHERE ctid = ANY (ARRAY(
    SELECT ctid FROM retrysafe_operations
    WHERE state IN ('completed', 'failed') AND ${SWEEP_AT} <= now()
    LIMIT $1
    FOR UPDATE SKIP LOCKED))
  RETURNING tenant, operation, key
), steps AS (
  DELETE FROM retrysafe_steps AS s
  USING swept
  WHERE s.tenant = swept.tenant AND s.operation = swept.operation AND s.key = swept.key
)
SELECT count(*)::int AS n FROM swept`;

/** Deletes tombstones past their own expiry; after this the key is new again. $1 batch size. */
export const DELETE_EXPIRED_TOMBSTONES = `
WITH deleted AS (
  DELETE FROM retrysafe_operations
  WHERE ctid = ANY (ARRAY(
    SELECT ctid FROM retrysafe_operations
    WHERE state = 'tombstone' AND ${SWEEP_AT} <= now()
    LIMIT $1
    FOR UPDATE SKIP LOCKED))
  RETURNING 1
)
SELECT count(*)::int AS n FROM deleted`;
