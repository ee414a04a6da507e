import { jsonText, statement } from './statement.js';
import { claimOrRead } from './record-row.js';
import { outcomeAssignments } from './outcome.js';

/**
 * Statements of leased mode. Every write by a worker names its owner token and
 * fencing token: a worker whose lease was taken over matches no row and
 * changes nothing. $1 tenant, $2 operation, $3 key throughout.
 */

/** The lease columns every lease-returning statement gives back. */
const LEASE_COLUMNS = `owner_token, fencing_token, attempt, input`;

/**
 * Commits an `in_progress` record with a fresh lease, or returns the record that holds the identity.
 * $4 fingerprint, $5 owner, $6 lease seconds, $7 input, $8 mode.
 * `$4::bytea`: drivers that encode a value by its parameter's type (PGlite) know bytea, not the column's domain.
 */
export const CLAIM_LEASE = statement('retrysafe_claim_lease', claimOrRead(`
  INSERT INTO retrysafe_operations AS o
    (tenant, operation, key, fingerprint, state, owner_token, lease_expires_at, input, mode)
  VALUES ($1, $2, $3, $4::bytea, 'in_progress', $5, now() + make_interval(secs => $6), ${jsonText('$7')}, $8)`));

/**
 * Takes over an expired lease by compare-and-swap on the fencing token last
 * seen: of several racing workers exactly one matches.
 * $4 fencing token seen, $5 new owner, $6 lease seconds.
 */
export const TAKE_OVER = statement('retrysafe_take_over', `
UPDATE retrysafe_operations
SET owner_token = $5,
    lease_expires_at = now() + make_interval(secs => $6),
    attempt = attempt + 1,
    fencing_token = fencing_token + 1
WHERE tenant = $1 AND operation = $2 AND key = $3
  AND state = 'in_progress' AND lease_expires_at <= now() AND fencing_token = $4
RETURNING ${LEASE_COLUMNS}`);

/** $4 owner, $5 fencing token, $6 lease seconds. */
export const RENEW = statement('retrysafe_renew', `
UPDATE retrysafe_operations
SET lease_expires_at = now() + make_interval(secs => $6)
WHERE tenant = $1 AND operation = $2 AND key = $3
  AND state = 'in_progress' AND owner_token = $4 AND fencing_token = $5
RETURNING lease_expires_at`);

/**
 * Checks ownership and locks the record for the rest of a transaction, so
 * that no take-over can slip in before the transaction's checkpoint commits.
 * $4 owner, $5 fencing token.
 */
export const LOCK_OWNED = statement('retrysafe_lock_owned', `
SELECT 1 FROM retrysafe_operations
WHERE tenant = $1 AND operation = $2 AND key = $3
  AND state = 'in_progress' AND owner_token = $4 AND fencing_token = $5
FOR UPDATE`);

/**
 * A recovery point, written only by the owner; it renews the lease too.
 * $4 owner, $5 fencing token, $6 lease seconds, $7 step, $8 result.
 */
export const CHECKPOINT = statement('retrysafe_checkpoint', `
WITH owned AS (
  UPDATE retrysafe_operations
  SET lease_expires_at = now() + make_interval(secs => $6)
  WHERE tenant = $1 AND operation = $2 AND key = $3
    AND state = 'in_progress' AND owner_token = $4 AND fencing_token = $5
  RETURNING tenant, operation, key, fencing_token
)
INSERT INTO retrysafe_steps (tenant, operation, key, step, result, fencing_token)
SELECT tenant, operation, key, $7, ${jsonText('$8')}, fencing_token FROM owned
ON CONFLICT (tenant, operation, key, step) DO NOTHING
RETURNING step`);

export const READ_STEPS = statement('retrysafe_read_steps', `
SELECT step, result FROM retrysafe_steps
WHERE tenant = $1 AND operation = $2 AND key = $3`);

/**
 * Finishes an owned operation: stores the outcome and drops the lease.
 * $4 owner, $5 fencing token, $6 state, $7 status, $8 headers, $9 body,
 * $10 resource, $11 response seconds, $12 tombstone seconds, $13 body omitted.
 */
export const FINISH_LEASE = statement('retrysafe_finish_lease', `
UPDATE retrysafe_operations
SET ${outcomeAssignments(6)},
    owner_token = NULL,
    lease_expires_at = NULL,
    input = NULL
WHERE tenant = $1 AND operation = $2 AND key = $3
  AND state = 'in_progress' AND owner_token = $4 AND fencing_token = $5
RETURNING 1`);

/** Gives the operation up when nothing of it reached the outside world: a retry starts afresh. $4 owner, $5 fencing token. */
export const ABANDON = statement('retrysafe_abandon', `
DELETE FROM retrysafe_operations
WHERE tenant = $1 AND operation = $2 AND key = $3
  AND state = 'in_progress' AND owner_token = $4 AND fencing_token = $5
RETURNING 1`);

/** Ends the lease early so that a retry or a recovery worker can resume at once. $4 owner, $5 fencing token, $6 seconds from now. */
export const RELEASE = statement('retrysafe_release', `
UPDATE retrysafe_operations
SET lease_expires_at = now() + make_interval(secs => $6)
WHERE tenant = $1 AND operation = $2 AND key = $3
  AND state = 'in_progress' AND owner_token = $4 AND fencing_token = $5
RETURNING 1`);

/** $4 owner, $5 fencing token, $6 reason. */
export const MARK_UNKNOWN = statement('retrysafe_mark_unknown', `
UPDATE retrysafe_operations
SET state = 'unknown', reason = $6, owner_token = NULL, lease_expires_at = NULL
WHERE tenant = $1 AND operation = $2 AND key = $3
  AND state = 'in_progress' AND owner_token = $4 AND fencing_token = $5
RETURNING 1`);

/**
 * Expired leases, oldest first: transparent ones and those of the operations
 * named, so that leases no worker here can finish do not crowd out the rest.
 * $1 limit, $2 operation names, or null for all.
 */
export const EXPIRED_LEASES = statement('retrysafe_expired_leases', `
SELECT tenant, operation, key, fencing_token, mode
FROM retrysafe_operations
WHERE state = 'in_progress' AND lease_expires_at <= now()
  AND ($2::text[] IS NULL OR mode = 'transparent' OR operation = ANY ($2::text[]))
ORDER BY lease_expires_at
LIMIT $1`);

/**
 * An operator's decision on an unknown operation; the reason is kept for audit.
 * $4 state, $5 status, $6 headers, $7 body, $8 resource, $9 response seconds,
 * $10 tombstone seconds, $11 body omitted, $12 reason.
 */
export const RESOLVE_UNKNOWN = statement('retrysafe_resolve_unknown', `
UPDATE retrysafe_operations
SET ${outcomeAssignments(4)},
    reason = $12,
    input = NULL
WHERE tenant = $1 AND operation = $2 AND key = $3 AND state = 'unknown'
RETURNING 1`);
