/** Statements for operators and for the gauges: reads only, never on the request path. */

/** The steps of one operation, started or finished, in the order they were started; results are left out. */
export const INSPECT_STEPS = `
SELECT step, started_at, finished_at, fencing_token
FROM retrysafe_steps
WHERE tenant = $1 AND operation = $2 AND key = $3
ORDER BY started_at, step`;

/**
 * The gauges, each answered from a partial index. Every committed in_progress
 * record holds a lease (or the end of its backoff), which the planner cannot
 * know: the oldest is looked for among the leases.
 */
export const STORE_STATS = `
SELECT
  (SELECT extract(epoch FROM now() - min(created_at))::float8
     FROM retrysafe_operations WHERE state = 'in_progress' AND lease_expires_at IS NOT NULL) AS oldest_in_progress_seconds,
  (SELECT count(*)::int FROM retrysafe_operations WHERE state = 'unknown' AND reason IS NOT NULL) AS unknown_operations,
  (SELECT count(*)::int FROM retrysafe_operations
     WHERE state = 'in_progress' AND lease_expires_at <= now()) AS expired_leases,
  -- Read from the partial index of parked events (migration 11), which live traffic never writes.
  (SELECT count(*)::int FROM retrysafe_webhook_events WHERE state = 'dead') AS parked_webhook_events`;

/**
 * How long the oldest unfinished operation has waited: in progress in any
 * mode, or unknown. Finished records and tombstones keep an expiry (the
 * table's checks say so), so the unfinished ones are exactly those without a
 * time in the sweeper's index of expiries, whose NULL entries sort together
 * after every time: the walk reads those entries and no others, and a new key
 * writes no index entry for it beyond the sweeper's own.
 */
export const OLDEST_UNFINISHED = `
SELECT extract(epoch FROM now() - min(created_at))::float8 AS oldest_unfinished_seconds
FROM retrysafe_operations
WHERE expires_at IS NULL`;

/** What `STUCK_OPERATIONS` reads of each operation, beside its kind. */
const STUCK_COLUMNS = `tenant, operation, key, mode, attempt, created_at, lease_expires_at, reason,
  failures, not_before, last_error, extract(epoch FROM now() - created_at)::float8 AS age_seconds`;

/**
 * Expired leases, operations backing off after a failed attempt, then unknown
 * outcomes, each oldest first. A released attempt's lease ends with its
 * backoff (`not_before`), so one backing off is found on the lease index
 * too, among the leases not yet expired. $1 minimum age in seconds, $2 limit
 * of each kind.
 */
export const STUCK_OPERATIONS = `
(SELECT ${STUCK_COLUMNS}, 'expired-lease' AS kind
 FROM retrysafe_operations
 WHERE state = 'in_progress' AND lease_expires_at <= now()
   AND created_at <= now() - make_interval(secs => $1)
 ORDER BY lease_expires_at
 LIMIT $2)
UNION ALL
(SELECT ${STUCK_COLUMNS}, 'backing-off'
 FROM retrysafe_operations
 WHERE state = 'in_progress' AND lease_expires_at > now() AND not_before > now()
   AND created_at <= now() - make_interval(secs => $1)
 ORDER BY lease_expires_at
 LIMIT $2)
UNION ALL
(SELECT ${STUCK_COLUMNS}, 'unknown'
 FROM retrysafe_operations
 WHERE state = 'unknown' AND reason IS NOT NULL AND created_at <= now() - make_interval(secs => $1)
 ORDER BY created_at
 LIMIT $2)`;

/**
 * Expired leases of leased operations other than those named, by operation:
 * what a recovery worker knowing only $1 leaves for another. Uses the same
 * partial index as the recovery worker's own query.
 */
export const UNHANDLED_LEASES = `
SELECT operation, count(*)::int AS n
FROM retrysafe_operations
WHERE state = 'in_progress' AND lease_expires_at <= now()
  AND mode = 'leased' AND operation <> ALL ($1::text[])
GROUP BY operation
ORDER BY operation`;
