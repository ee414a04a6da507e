/**
 * Statements of the hourly activity counts (migration 0013). None runs on the
 * request path: each process adds what it counted every few seconds, in one
 * statement for all its buckets.
 */

/**
 * Adds counts to their buckets: $1 hours (UTC, ISO text), $2 operations, $3
 * kinds, $4 counts, one element per bucket, no bucket twice. Rows are locked
 * in key order so that two processes adding to the same buckets never
 * deadlock.
 */
export const ADD_ACTIVITY = `
INSERT INTO retrysafe_activity AS a (hour, operation, kind, n)
SELECT hour, operation, kind, n
FROM unnest($1::timestamptz[], $2::text[], $3::text[], $4::bigint[]) AS c (hour, operation, kind, n)
ORDER BY hour, operation, kind
ON CONFLICT (hour, operation, kind) DO UPDATE SET n = a.n + excluded.n`;

/** The buckets of the last $1 hours, the current one included, oldest first: a walk of the primary key from that hour. */
export const ACTIVITY_SINCE = `
SELECT hour, operation, kind, n::float8 AS n
FROM retrysafe_activity
WHERE hour >= date_trunc('hour', now(), 'UTC') - make_interval(hours => $1 - 1)
ORDER BY hour, operation, kind`;

/** Deletes up to $2 buckets of hours that ended more than $1 seconds ago, the oldest first, on the primary key. */
export const PRUNE_ACTIVITY = `
WITH pruned AS (
  DELETE FROM retrysafe_activity
  WHERE (hour, operation, kind) IN (
    SELECT hour, operation, kind FROM retrysafe_activity
    WHERE hour < now() - make_interval(secs => $1) - interval '1 hour'
    ORDER BY hour
    LIMIT $2
  )
  RETURNING 1
)
SELECT count(*)::int AS count FROM pruned`;
