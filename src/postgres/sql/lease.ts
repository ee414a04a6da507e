import type { Completion } from '../../core/completion.js';
import type { OperationIdentity } from '../../core/identity.js';
import type { Failure, Lease, LeaseRequest, Release } from '../../store/lease-store.js';
import { jsonText, statement } from './statement.js';
import { ids, recordColumns, STORED_RECORD_COLUMNS } from './record-row.js';
import { completionAssignments, completionValues } from './completion.js';

/**
 * Statements of leased mode. Every write by a worker names its owner token and
 * fencing token: a worker whose lease was taken over matches no row and
 * changes nothing. $1 tenant, $2 operation, $3 key throughout.
 */

/** Not resting after a failed attempt: a take-over may begin. */
const RESTED = `(not_before IS NULL OR not_before <= now())`;

/** A held lease's values as $1 tenant, $2 operation, $3 key, $4 owner, $5 fencing token: what every owned write starts with. */
function ownedValues(lease: Lease): unknown[] {
  return [...ids(lease.identity), lease.ownerToken, lease.fencingToken];
}

/**
 * Wraps a claiming INSERT so that one round trip either claims the identity
 * or returns the record holding it. The time it was read is selected outside
 * the INSERT's RETURNING, which on Citus may call IMMUTABLE functions only.
 * At READ COMMITTED a record committed while the INSERT waited is not in this
 * statement's snapshot, so the second branch
 * can come back empty: the caller then reads it in a new statement
 * (`READ_RECORD`). $1 tenant, $2 operation, $3 key.
 */
function claimOrRead(insert: string): string {
  return `
WITH claimed AS (
${insert}
  ON CONFLICT (tenant, operation, key) DO NOTHING
  RETURNING ${STORED_RECORD_COLUMNS}
)
SELECT true AS claimed, ${recordColumns('claimed')} FROM claimed
UNION ALL
SELECT false, ${recordColumns('o')}
FROM retrysafe_operations AS o
WHERE o.tenant = $1 AND o.operation = $2 AND o.key = $3 AND NOT EXISTS (SELECT FROM claimed)`;
}

/**
 * Commits an `in_progress` record with a fresh lease, or returns the record that holds the identity.
 * $4 fingerprint, $5 owner, $6 lease seconds, $7 input, $8 mode, $9 principal digest (or null).
 * `$4::bytea`: drivers that encode a value by its parameter's type (PGlite) know bytea, not the column's domain.
 */
export const CLAIM_LEASE = statement(
  'retrysafe_claim_lease',
  claimOrRead(`
  INSERT INTO retrysafe_operations AS o
    (tenant, operation, key, fingerprint, state, owner_token, lease_expires_at, input, mode, principal)
  VALUES ($1, $2, $3, $4::bytea, 'in_progress', $5, now() + make_interval(secs => $6), ${jsonText('$7')}, $8, $9::bytea)`),
);

/** The values of `CLAIM_LEASE` for one request. */
export function claimLeaseValues(request: LeaseRequest): unknown[] {
  return [
    ...ids(request.identity),
    request.fingerprint,
    request.ownerToken,
    request.leaseSeconds,
    JSON.stringify(request.input ?? null),
    request.mode,
    request.principal ?? null,
  ];
}

/**
 * Takes over an expired lease by compare-and-swap on the fencing token last
 * seen: of several racing workers exactly one matches. Never before the
 * backoff of a failed attempt has passed. The age (from the claim or the
 * operator's retry) is computed outside RETURNING, as in `claimOrRead`.
 * $4 fencing token seen, $5 new owner, $6 lease seconds.
 */
export const TAKE_OVER = statement(
  'retrysafe_take_over',
  `
WITH taken AS (
UPDATE retrysafe_operations
SET owner_token = $5,
    lease_expires_at = now() + make_interval(secs => $6),
    not_before = NULL,
    attempt = attempt + 1,
    fencing_token = fencing_token + 1
WHERE tenant = $1 AND operation = $2 AND key = $3
  AND state = 'in_progress' AND lease_expires_at <= now() AND ${RESTED} AND fencing_token = $4
RETURNING owner_token, fencing_token, attempt, input, failures, coalesce(retried_at, created_at) AS since
)
SELECT owner_token, fencing_token, attempt, input, failures, extract(epoch FROM now() - since)::float8 AS age_seconds
FROM taken`,
);

/** The values of `TAKE_OVER`. */
export function takeOverValues(
  identity: OperationIdentity,
  seenFencingToken: number,
  ownerToken: string,
  leaseSeconds: number,
): unknown[] {
  return [...ids(identity), seenFencingToken, ownerToken, leaseSeconds];
}

/** $4 owner, $5 fencing token, $6 lease seconds. */
export const RENEW = statement(
  'retrysafe_renew',
  `
UPDATE retrysafe_operations
SET lease_expires_at = now() + make_interval(secs => $6)
WHERE tenant = $1 AND operation = $2 AND key = $3
  AND state = 'in_progress' AND owner_token = $4 AND fencing_token = $5
RETURNING lease_expires_at`,
);

/** The values of `RENEW`. */
export function renewValues(lease: Lease): unknown[] {
  return [...ownedValues(lease), lease.leaseSeconds];
}

/**
 * Checks ownership and locks the record for the rest of a transaction, so
 * that no take-over can slip in before the transaction's checkpoint commits.
 * $4 owner, $5 fencing token.
 */
export const LOCK_OWNED = statement(
  'retrysafe_lock_owned',
  `
SELECT 1 FROM retrysafe_operations
WHERE tenant = $1 AND operation = $2 AND key = $3
  AND state = 'in_progress' AND owner_token = $4 AND fencing_token = $5
FOR UPDATE`,
);

/** The values of `LOCK_OWNED`. */
export function lockOwnedValues(lease: Lease): unknown[] {
  return ownedValues(lease);
}

/** Renews an owned lease, as the first part of a statement that writes for the owner. $4 owner, $5 fencing token, $6 lease seconds. */
const OWNED_RENEWED = `WITH owned AS (
  UPDATE retrysafe_operations
  SET lease_expires_at = now() + make_interval(secs => $6)
  WHERE tenant = $1 AND operation = $2 AND key = $3
    AND state = 'in_progress' AND owner_token = $4 AND fencing_token = $5
  RETURNING tenant, operation, key, fencing_token
)`;

/**
 * Records that a step is about to call downstream, before the call, written
 * only by the owner; it renews the lease too. A step started by an earlier
 * attempt is started again; a finished one is not. The start time comes in
 * with the row: Citus allows no function but IMMUTABLE ones in DO UPDATE SET.
 * $4 owner, $5 fencing token, $6 lease seconds, $7 step.
 */
export const START_STEP = statement(
  'retrysafe_start_step',
  `
${OWNED_RENEWED}
INSERT INTO retrysafe_steps (tenant, operation, key, step, fencing_token, started_at)
SELECT tenant, operation, key, $7, fencing_token, now() FROM owned
ON CONFLICT (tenant, operation, key, step) DO UPDATE
  SET fencing_token = EXCLUDED.fencing_token, started_at = EXCLUDED.started_at
  WHERE retrysafe_steps.finished_at IS NULL
RETURNING step`,
);

/** The values of `START_STEP`. */
export function startStepValues(lease: Lease, step: string): unknown[] {
  return [...ownedValues(lease), lease.leaseSeconds, step];
}

/**
 * A recovery point, written only by the owner; it renews the lease too. It
 * finishes the step's started row, or is the step's first row (a local step).
 * $4 owner, $5 fencing token, $6 lease seconds, $7 step, $8 result.
 */
export const CHECKPOINT = statement(
  'retrysafe_checkpoint',
  `
${OWNED_RENEWED}
INSERT INTO retrysafe_steps (tenant, operation, key, step, result, fencing_token, finished_at)
SELECT tenant, operation, key, $7, ${jsonText('$8')}, fencing_token, now() FROM owned
ON CONFLICT (tenant, operation, key, step) DO UPDATE
  SET result = EXCLUDED.result, fencing_token = EXCLUDED.fencing_token, finished_at = EXCLUDED.finished_at
  WHERE retrysafe_steps.finished_at IS NULL
RETURNING step`,
);

/** The values of `CHECKPOINT`; the result is stored as JSON. */
export function checkpointValues(lease: Lease, step: string, result: unknown): unknown[] {
  return [...ownedValues(lease), lease.leaseSeconds, step, JSON.stringify(result ?? null)];
}

/** Every step started or finished so far; a step without `finished_at` may have reached the outside world. */
export const READ_STEPS = statement(
  'retrysafe_read_steps',
  `
SELECT step, result, finished_at IS NOT NULL AS finished FROM retrysafe_steps
WHERE tenant = $1 AND operation = $2 AND key = $3`,
);

/** The values of `READ_STEPS`. */
export function readStepsValues(lease: Lease): unknown[] {
  return ids(lease.identity);
}

/**
 * Completes an owned operation: stores its completion and drops the lease.
 * $4 owner, $5 fencing token, $6 state, $7 status, $8 headers, $9 body,
 * $10 resource, $11 response seconds, $12 tombstone seconds, $13 body omitted.
 */
export const COMPLETE_LEASE = statement(
  'retrysafe_complete_lease',
  `
UPDATE retrysafe_operations
SET ${completionAssignments(6)},
    owner_token = NULL,
    lease_expires_at = NULL,
    input = NULL
WHERE tenant = $1 AND operation = $2 AND key = $3
  AND state = 'in_progress' AND owner_token = $4 AND fencing_token = $5
RETURNING 1`,
);

/** The values of `COMPLETE_LEASE`. */
export function completeLeaseValues(lease: Lease, completion: Completion): unknown[] {
  return [...ownedValues(lease), ...completionValues(completion)];
}

/** Gives the operation up when nothing of it reached the outside world: a retry starts afresh. $4 owner, $5 fencing token. */
export const ABANDON = statement(
  'retrysafe_abandon',
  `
DELETE FROM retrysafe_operations
WHERE tenant = $1 AND operation = $2 AND key = $3
  AND state = 'in_progress' AND owner_token = $4 AND fencing_token = $5
RETURNING 1`,
);

/** The values of `ABANDON`. */
export function abandonValues(lease: Lease): unknown[] {
  return ownedValues(lease);
}

/**
 * Ends the lease after a failed attempt: a retry or a recovery worker may
 * resume the operation once the backoff has passed. The lease ends with the
 * backoff, so a duplicate's Retry-After and the workers' index see it too.
 * $4 owner, $5 fencing token, $6 backoff seconds, $7 1 when the failure counts toward giving up, $8 its error.
 */
export const RELEASE = statement(
  'retrysafe_release',
  `
UPDATE retrysafe_operations
SET lease_expires_at = now() + make_interval(secs => $6),
    not_before = now() + make_interval(secs => $6),
    failures = failures + $7,
    last_error = $8
WHERE tenant = $1 AND operation = $2 AND key = $3
  AND state = 'in_progress' AND owner_token = $4 AND fencing_token = $5
RETURNING 1`,
);

/** The values of `RELEASE`. */
export function releaseValues(lease: Lease, release: Release): unknown[] {
  return [...ownedValues(lease), release.delaySeconds, ...failureValues(release)];
}

/** A failure's two columns: 1 when it counts toward giving up, and its error. */
function failureValues(failure: Failure | undefined): unknown[] {
  return [failure?.counted === true ? 1 : 0, failure?.error ?? null];
}

/**
 * $4 owner, $5 fencing token, $6 reason; $7 1 when the attempt that gives up
 * failed in a way that counts, $8 its error (null: the last error stays).
 */
export const MARK_UNKNOWN = statement(
  'retrysafe_mark_unknown',
  `
UPDATE retrysafe_operations
SET state = 'unknown', reason = $6, owner_token = NULL, lease_expires_at = NULL,
    failures = failures + $7, last_error = coalesce($8, last_error)
WHERE tenant = $1 AND operation = $2 AND key = $3
  AND state = 'in_progress' AND owner_token = $4 AND fencing_token = $5
RETURNING 1`,
);

/** The values of `MARK_UNKNOWN`. */
export function markUnknownValues(lease: Lease, reason: string, failure?: Failure): unknown[] {
  return [...ownedValues(lease), reason, ...failureValues(failure)];
}

/**
 * Expired leases past their backoff, oldest first: transparent ones and those of the operations
 * named, so that leases no worker here can complete do not crowd out the rest.
 * $1 limit, $2 operation names, or null for all.
 */
export const EXPIRED_LEASES = statement(
  'retrysafe_expired_leases',
  `
SELECT tenant, operation, key, fencing_token, mode
FROM retrysafe_operations
WHERE state = 'in_progress' AND lease_expires_at <= now() AND ${RESTED}
  AND ($2::text[] IS NULL OR mode = 'transparent' OR operation = ANY ($2::text[]))
ORDER BY lease_expires_at
LIMIT $1`,
);

/** The values of `EXPIRED_LEASES`: every operation's when none are named. */
export function expiredLeasesValues(limit: number, operations: readonly string[] | undefined): unknown[] {
  return [limit, operations === undefined ? null : [...operations]];
}
