/**
 * Statements of the sweeper. Each one handles at most $1 rows, found by
 * walking the one index of migration 0009, on the time a finished record next
 * needs the sweeper, in its order from $2 (where the step's previous batch
 * stopped, `-infinity` for a pass's first) up to now. ORDER BY the index's
 * expression with LIMIT is what keeps the walk on the index whatever the
 * statistics say: without it, once they counted a tenth of the table as due,
 * the planner read the table for the first $1 rows it expected to meet, and
 * an empty batch then read all of it. The rows are locked with SKIP LOCKED and
 * reached again by their physical address (ctid, stable while the row is
 * locked), and each batch runs as its own statement: no batch waits for a
 * request, and no request waits for more than one batch. Unfinished
 * operations (`in_progress`, `unknown`) are outside the index's times and
 * never swept.
 */

/** The indexed time at which a record next needs the sweeper, exactly as the index is defined. */
export const SWEEP_AT = `(CASE WHEN state = 'tombstone' THEN expires_at ELSE response_expires_at END)`;

/**
 * `due`: at most $1 rows in `states` due from $2 on, in the index's order,
 * locked, each with its place in that order. The step's batch then answers how
 * many rows it changed (`n`, counted from `changed`) and the place of the last
 * one (`resume`), from which its next batch walks on: rows of the other step
 * that this one stepped over are not read again.
 */
function batch(states: string, change: string, changed: string): string {
  return `
WITH due AS MATERIALIZED (
  SELECT ctid, ${SWEEP_AT} AS at FROM retrysafe_operations
  WHERE ${SWEEP_AT} >= $2::timestamptz AND ${SWEEP_AT} <= now() AND state IN (${states})
  ORDER BY ${SWEEP_AT}
  LIMIT $1
  FOR UPDATE SKIP LOCKED
), ${change}
SELECT (SELECT count(*)::int FROM ${changed}) AS n, (SELECT max(at)::text FROM due) AS resume`;
}

/**
 * Turns completed records whose response expired into tombstones: the body,
 * the headers and the recovery points go; identity, fingerprint, status and
 * resource reference stay, so a late retry is refused rather than run again.
 * $1 batch size, $2 where to walk from.
 */
export const TOMBSTONE_EXPIRED = batch(
  `'completed', 'failed'`,
  `swept AS (
  UPDATE retrysafe_operations
  SET state = 'tombstone', response_body = NULL, response_headers = NULL, input = NULL
  WHERE ctid = ANY (ARRAY(SELECT ctid FROM due))
  RETURNING tenant, operation, key
), steps AS (
  DELETE FROM retrysafe_steps AS s
  USING swept
  WHERE s.tenant = swept.tenant AND s.operation = swept.operation AND s.key = swept.key
)`,
  'swept',
);

/** Deletes tombstones past their own expiry; after this the key is new again. $1 batch size, $2 where to walk from. */
export const DELETE_EXPIRED_TOMBSTONES = batch(
  `'tombstone'`,
  `deleted AS (
  DELETE FROM retrysafe_operations
  WHERE ctid = ANY (ARRAY(SELECT ctid FROM due))
  RETURNING 1
)`,
  'deleted',
);
