/** Statements of recorded webhooks (`retrysafe_webhook_events`). */

import { jsonText } from './statement.js';

/**
 * Records a verified webhook before its sender is answered. No row back means
 * the same `webhook-id` was recorded before: a redelivery.
 * $1 receiver, $2 webhook id, $3 payload (JSON text), $4 webhook timestamp (unix seconds).
 */
export const RECORD_WEBHOOK_EVENT = `
INSERT INTO retrysafe_webhook_events (receiver, id, payload, sent_at)
VALUES ($1, $2, ${jsonText('$3')}, to_timestamp($4))
ON CONFLICT (receiver, id) DO NOTHING
RETURNING id`;

/**
 * The next due event, locked for the rest of the processing transaction:
 * workers side by side skip it, and a worker that dies releases it.
 * $1 receiver, $2 ids already tried in this pass.
 */
export const NEXT_WEBHOOK_EVENT = `
SELECT id, payload, sent_at, received_at, attempts
FROM retrysafe_webhook_events
WHERE receiver = $1 AND state = 'received' AND next_attempt_at <= now()
  AND NOT (id = ANY ($2::text[]))
ORDER BY next_attempt_at
LIMIT 1
FOR UPDATE SKIP LOCKED`;

/** $1 receiver, $2 webhook id. */
export const MARK_WEBHOOK_PROCESSED = `
UPDATE retrysafe_webhook_events
SET state = 'processed', processed_at = now()
WHERE receiver = $1 AND id = $2 AND state = 'received'`;

/** A failed processing attempt, retried after a backoff. $1 receiver, $2 webhook id, $3 delay seconds, $4 error. */
export const RESCHEDULE_WEBHOOK_EVENT = `
UPDATE retrysafe_webhook_events
SET attempts = attempts + 1, next_attempt_at = now() + make_interval(secs => $3), last_error = $4
WHERE receiver = $1 AND id = $2 AND state = 'received'`;

/** A failed last attempt: the event is parked for an operator, who sees when. $1 receiver, $2 webhook id, $3 error. */
export const PARK_WEBHOOK_EVENT = `
UPDATE retrysafe_webhook_events
SET attempts = attempts + 1, state = 'dead', last_error = $3, parked_at = now()
WHERE receiver = $1 AND id = $2 AND state = 'received'`;

/** One batch of processed events older than the retention, oldest first on their index (as the outbox's prune). $1 seconds, $2 batch size. */
export const PRUNE_WEBHOOK_EVENTS = `
WITH pruned AS (
  DELETE FROM retrysafe_webhook_events
  WHERE (receiver, id) IN (
    SELECT receiver, id FROM retrysafe_webhook_events
    WHERE state = 'processed' AND processed_at < now() - make_interval(secs => $1)
    ORDER BY processed_at
    LIMIT $2
  )
  RETURNING 1
)
SELECT count(*)::int AS count FROM pruned`;
