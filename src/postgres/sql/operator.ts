/**
 * The operators' statements: pages walked on indexes that exist, never an
 * OFFSET, and actions that change a record only if it is still what the
 * operator saw, recording who acted and why in the same statement.
 * Null parameters switch a filter off; the statements are sent unnamed, so
 * PostgreSQL plans each with its values and drops the filters that are off
 * (all but the two actions on an unknown operation, at the end).
 */
import type { Completion } from '../../core/completion.js';
import type { OperationIdentity } from '../../core/identity.js';
import { completionAssignments, completionValues } from './completion.js';
import { NOTIFY } from './outbox.js';
import { ids } from './record-row.js';
import { statement } from './statement.js';

/** Microsecond-exact text of a time, so that a cursor or a version read back names exactly the same instant. */
const exact = (column: string) => `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`;

const SUMMARY = `o.tenant, o.operation, o.key, o.state, o.mode, o.attempt, o.fencing_token, o.created_at,
  o.finished_at, o.lease_expires_at, o.response_status, o.reason`;

/**
 * Filters every list shares. $1 tenant, $2 operation, $3 exact key, $4 key
 * prefix, $5 the first string after every key with that prefix (null when the
 * collation does not order by bytes), $6 state, $7 minimum age in seconds.
 */
const FILTERS = `($1::text IS NULL OR o.tenant = $1)
  AND ($2::text IS NULL OR o.operation = $2)
  AND ($3::text IS NULL OR o.key = $3)
  AND ($4::text IS NULL OR (o.key >= $4 AND starts_with(o.key, $4)))
  AND ($5::text IS NULL OR o.key < $5)
  AND ($6::text IS NULL OR o.state = $6)
  AND ($7::float8 IS NULL OR o.created_at <= now() - make_interval(secs => $7))`;

/**
 * In primary-key order, after the identity $8, $9, $10 (all '' for the first
 * page: no name is shorter). $11 limit. With a tenant, the walk stays in its
 * part of the index.
 */
export const LIST_BY_IDENTITY = `
SELECT ${SUMMARY}
FROM retrysafe_operations AS o
WHERE ${FILTERS}
  AND (o.tenant, o.operation, o.key) > ($8::text, $9::text, $10::text)
ORDER BY o.tenant, o.operation, o.key
LIMIT $11`;

/**
 * A key without an operation: the primary key leads with the tenant and the
 * operation, so the walk skips from one (tenant, operation) to the next, a
 * short descent each, and looks the key up in each; with a tenant $1 it starts
 * there ($8 is the tenant on the first page) and stops where the tenant ends.
 * As fast as there are few tenants and operations; it stops as soon as the
 * page is full. Same parameters as LIST_BY_IDENTITY.
 */
export const LIST_BY_KEY = `
WITH RECURSIVE pairs (tenant, operation) AS (
  SELECT first.tenant, first.operation FROM (
    SELECT o.tenant, o.operation FROM retrysafe_operations AS o
    WHERE (o.tenant, o.operation) >= ($8::text, $9::text)
    ORDER BY o.tenant, o.operation LIMIT 1) AS first
  WHERE $1::text IS NULL OR first.tenant = $1
  UNION ALL
  SELECT following.tenant, following.operation
  FROM pairs, LATERAL (
    SELECT o.tenant, o.operation FROM retrysafe_operations AS o
    WHERE (o.tenant, o.operation) > (pairs.tenant, pairs.operation)
    ORDER BY o.tenant, o.operation LIMIT 1) AS following
  WHERE $1::text IS NULL OR following.tenant = $1
)
SELECT found.*
FROM pairs, LATERAL (
  SELECT ${SUMMARY}
  FROM retrysafe_operations AS o
  WHERE o.tenant = pairs.tenant AND o.operation = pairs.operation AND ${FILTERS}
    AND (o.tenant, o.operation, o.key) > ($8::text, $9::text, $10::text)
  ORDER BY o.key
  LIMIT $11) AS found
LIMIT $11`;

/**
 * By a time column through its partial index, oldest first, after the
 * position $8 (exact time), $9, $10, $11 (identity); $12 limit. The walk says
 * its state itself ($6 is null here: said twice, the planner would count it
 * twice). A page reads at most the rows in that state, never the table.
 */
function byTime(column: string, indexed: string, state: string): string {
  return `
SELECT ${SUMMARY}, ${exact(`o.${column}`)} AS position
FROM retrysafe_operations AS o
WHERE ${indexed} AND o.state = '${state}' AND ${FILTERS}
  AND (o.${column}, o.tenant, o.operation, o.key) > ($8::timestamptz, $9::text, $10::text, $11::text)
ORDER BY o.${column}, o.tenant, o.operation, o.key
LIMIT $12`;
}

/** Unknown outcomes by claim time, on the index of reasoned records. */
export const LIST_UNKNOWN = byTime('created_at', 'o.reason IS NOT NULL', 'unknown');
/** Unfinished leased and transparent work by lease expiry, expired first, on the lease index. */
export const LIST_LEASED = byTime('lease_expires_at', 'o.lease_expires_at IS NOT NULL', 'in_progress');

/**
 * Whether the database orders text by bytes, so that a key prefix bounds a range of the index: the C and POSIX
 * collations, C.UTF-8 (code point order, which is byte order in UTF-8; glibc's and PostgreSQL 17's builtin
 * provider's), never an ICU one. The provider is read from the row as JSON: PostgreSQL 14 has no such column.
 */
export const BYTE_ORDERED = `
SELECT CASE to_jsonb(d) ->> 'datlocprovider'
    WHEN 'b' THEN true
    WHEN 'i' THEN false
    ELSE d.datcollate IN ('C', 'POSIX', 'C.UTF-8', 'C.utf8')
  END AS byte_ordered
FROM pg_database AS d WHERE d.datname = current_database()`;

/** One record in full, its body only when $4 is true. $1 tenant, $2 operation, $3 key. */
export const OPERATION_VIEW = `
SELECT ${SUMMARY}, o.fingerprint, o.owner_token, o.not_before, o.failures, o.last_error, o.retried_at,
  o.response_headers, o.resource_ref, o.response_omitted, octet_length(o.response_body) AS body_bytes,
  CASE WHEN $4::boolean THEN o.response_body END AS response_body,
  o.input IS NOT NULL AS resumable, o.response_expires_at, o.expires_at
FROM retrysafe_operations AS o
WHERE o.tenant = $1 AND o.operation = $2 AND o.key = $3`;

/**
 * The success status the operation answered another key of the tenant with,
 * as stored: within the primary key's part for the tenant and operation,
 * where finished records are the many. $1 tenant, $2 operation.
 */
export const SUCCESS_STATUS = `
SELECT o.response_status
FROM retrysafe_operations AS o
WHERE o.tenant = $1 AND o.operation = $2 AND o.state IN ('completed', 'tombstone')
  AND o.response_status BETWEEN 200 AND 299
LIMIT 1`;

/** What operators did to one operation, oldest first. */
export const OPERATION_ACTIONS = `
SELECT at, actor, action, reason, seen, detail
FROM retrysafe_operator_actions
WHERE tenant = $1 AND operation = $2 AND key = $3 AND message_id IS NULL
ORDER BY at, id`;

/** Dead letters, most recently parked first, on the dead-letter index. $1 limit, after $2 (exact time), $3 id. */
export const DEAD_LETTER_PAGE = `
SELECT id, topic, attempts, last_error, created_at, parked_at, ${exact('parked_at')} AS position
FROM retrysafe_outbox
WHERE state = 'dead' AND ($2::timestamptz IS NULL OR (parked_at, id) < ($2::timestamptz, $3::uuid))
ORDER BY parked_at DESC, id DESC
LIMIT $1`;

/**
 * Webhook events parked after too many failures, most recent first, on the
 * index of parked events. $1 limit, after $2 (exact time), $3 receiver, $4 id.
 * `version`: when it was parked, to the microsecond ('' if before migration 11).
 */
export const PARKED_EVENT_PAGE = `
SELECT receiver, id, attempts, last_error, received_at, ${exact('received_at')} AS position,
  coalesce(${exact('parked_at')}, '') AS version
FROM retrysafe_webhook_events
WHERE state = 'dead' AND ($2::timestamptz IS NULL OR (received_at, receiver, id) < ($2::timestamptz, $3::text, $4::text))
ORDER BY received_at DESC, receiver DESC, id DESC
LIMIT $1`;

/** $n actor, $n+1 reason: the columns every action records. */
const RECORD_ACTION = `INSERT INTO retrysafe_operator_actions (actor, action, tenant, operation, key, message_id, receiver, event_id, reason, seen, detail)`;

/**
 * Deletes a record seen in state $4 with fencing token $5, never one whose
 * lease is still held, and records who ($6) and why ($7). Its steps go with it.
 */
export const PURGE = `
WITH gone AS (
  DELETE FROM retrysafe_operations
  WHERE tenant = $1 AND operation = $2 AND key = $3 AND state = $4 AND fencing_token = $5
    AND NOT (state = 'in_progress' AND lease_expires_at > now())
  RETURNING tenant, operation, key, state, fencing_token
)
${RECORD_ACTION}
SELECT $6, 'purge', tenant, operation, key, NULL, NULL, NULL, $7, jsonb_build_object('state', state, 'fencingToken', fencing_token), '{}'
FROM gone
RETURNING 1`;

/**
 * A parked row put back in line with a fresh count of attempts by `update`
 * (which returns the subject's columns `message_id, receiver, event_id`), and
 * the requeue recorded with who ($actor) and why ($reason) and when it was
 * seen parked ($seen), in one statement.
 */
function requeue(update: string, actor: string, reason: string, seen: string): string {
  return `
WITH requeued AS (${update})
${RECORD_ACTION}
SELECT ${actor}, 'requeue', NULL, NULL, NULL, message_id, receiver, event_id, ${reason}, jsonb_build_object('parkedAt', ${seen}::text), '{}'
FROM requeued
RETURNING 1`;
}

/**
 * Sends a dead letter parked at $2 (exact time) again, recording who ($3) and
 * why ($4). $1 id. $2 is text, so that the version recorded is the one the
 * operator saw, not the time as the session's settings print it.
 */
export const REQUEUE = requeue(
  `
  UPDATE retrysafe_outbox
  SET state = 'pending', parked_at = NULL, attempts = 0, next_attempt_at = now()
  WHERE id = $1 AND state = 'dead' AND parked_at = $2::text::timestamptz
  RETURNING id AS message_id, NULL::text AS receiver, NULL::text AS event_id, ${NOTIFY}`,
  '$3',
  '$4',
  '$2',
);

/**
 * Processes a parked webhook event again, if it is still parked as seen at $3
 * (exact time, '' for an event parked before migration 11), recording who ($4)
 * and why ($5). $1 receiver, $2 id.
 */
export const REQUEUE_EVENT = requeue(
  `
  UPDATE retrysafe_webhook_events
  SET state = 'received', parked_at = NULL, attempts = 0, next_attempt_at = now()
  WHERE receiver = $1 AND id = $2 AND state = 'dead' AND parked_at IS NOT DISTINCT FROM nullif($3::text, '')::timestamptz
  RETURNING NULL::uuid AS message_id, receiver, id AS event_id`,
  '$4',
  '$5',
  '$3',
);

/** Records an action done through another seam. $1 actor, $2 action, $3-$5 identity, $6 reason, $7 seen, $8 detail. */
export const RECORD = `
${RECORD_ACTION}
VALUES ($1, $2, $3, $4, $5, NULL, NULL, NULL, $6, $7::text::jsonb, $8::text::jsonb)`;

/*
 * The actions on an unknown operation (`UnknownActions`), which the
 * application's store sends: named statements, prepared once like the rest
 * of its statements. $1 tenant, $2 operation, $3 key.
 */

/**
 * An operator's decision on an unknown operation; the reason is kept for audit.
 * $4 state, $5 status, $6 headers, $7 body, $8 resource, $9 response seconds,
 * $10 tombstone seconds, $11 body omitted, $12 reason, $13 the fencing token
 * the operator saw, or null.
 */
export const RESOLVE_UNKNOWN = statement(
  'retrysafe_resolve_unknown',
  `
UPDATE retrysafe_operations
SET ${completionAssignments(4)},
    reason = $12,
    input = NULL
WHERE tenant = $1 AND operation = $2 AND key = $3 AND state = 'unknown'
  AND ($13::int IS NULL OR fencing_token = $13)
RETURNING 1`,
);

/** The values of `RESOLVE_UNKNOWN`. */
export function resolveUnknownValues(
  identity: OperationIdentity,
  completion: Completion,
  reason: string,
  fencingToken?: number,
): unknown[] {
  return [...ids(identity), ...completionValues(completion), reason, fencingToken ?? null];
}

/**
 * Puts an unknown leased operation back into recovery once an operator has
 * fixed the cause: its lease is expired at once, its failures and give-up
 * horizon start again, its steps and their recovery points stay.
 * $4 owner token nobody holds, $5 reason, $6 the fencing token the operator saw, or null.
 */
export const RETRY_UNKNOWN = statement(
  'retrysafe_retry_unknown',
  `
UPDATE retrysafe_operations
SET state = 'in_progress', owner_token = $4, lease_expires_at = now(), not_before = NULL,
    failures = 0, retried_at = now(), reason = $5
WHERE tenant = $1 AND operation = $2 AND key = $3
  AND state = 'unknown' AND mode = 'leased' AND input IS NOT NULL
  AND ($6::int IS NULL OR fencing_token = $6)
RETURNING 1`,
);

/** The values of `RETRY_UNKNOWN`. */
export function retryUnknownValues(
  identity: OperationIdentity,
  ownerToken: string,
  reason: string,
  fencingToken?: number,
): unknown[] {
  return [...ids(identity), ownerToken, reason, fencingToken ?? null];
}
