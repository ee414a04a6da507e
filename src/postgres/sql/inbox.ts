/** Statements of the consumer inbox (`retrysafe_inbox`). */

/**
 * Records that a consumer processed a message, in the transaction of the
 * consumer's writes. No row back means an earlier delivery was processed: the
 * handler must not run. A concurrent delivery of the same message waits here
 * for the first to commit (then gets no row) or roll back (then inserts).
 * $1 consumer, $2 generation, $3 message id.
 */
export const RECORD_MESSAGE = `
INSERT INTO retrysafe_inbox (consumer, generation, message_id)
VALUES ($1, $2, $3)
ON CONFLICT (consumer, generation, message_id) DO NOTHING
RETURNING 1`;

/** One batch of inbox records older than the retention, oldest first on their index (as the outbox's prune). $1 seconds, $2 batch size. */
export const PRUNE_INBOX = `
WITH pruned AS (
  DELETE FROM retrysafe_inbox
  WHERE (consumer, generation, message_id) IN (
    SELECT consumer, generation, message_id FROM retrysafe_inbox
    WHERE processed_at < now() - make_interval(secs => $1)
    ORDER BY processed_at
    LIMIT $2
  )
  RETURNING 1
)
SELECT count(*)::int AS count FROM pruned`;
