/** Statements of the transactional outbox (`retrysafe_outbox`). */

import { jsonText } from './statement.js';

/** Relays LISTEN on this channel; enqueueing notifies it when the transaction commits. */
export const OUTBOX_CHANNEL = 'retrysafe_outbox';

/** Wakes the relays on commit. As text: some data layers (Prisma) cannot read a column of type void. */
export const NOTIFY = `pg_notify('${OUTBOX_CHANNEL}', '')::text AS notified`;

/**
 * Adds a message in the caller's transaction. A message whose id is already
 * there is left as it is: enqueueing the same id twice is one message. The
 * notification is sent only if the transaction commits.
 * $1 id, $2 topic, $3 headers, $4 payload.
 */
export const ENQUEUE = `
WITH added AS (
  INSERT INTO retrysafe_outbox (id, topic, headers, payload)
  VALUES ($1, $2, ${jsonText('$3')}, ${jsonText('$4')})
  ON CONFLICT (id) DO NOTHING
  RETURNING id
)
SELECT id, ${NOTIFY} FROM added`;

/**
 * Claims due messages for one relay. SKIP LOCKED lets relays running side by
 * side take different messages instead of waiting for each other; the lease
 * (`locked_until`) keeps the others off while this one publishes, outside any
 * transaction.
 * $1 batch size, $2 lease seconds, $3 claim token, $4 topics or null for all,
 * $5 most attempts.
 */
export const CLAIM = `
WITH due AS (
  SELECT id FROM retrysafe_outbox
  WHERE state = 'pending' AND next_attempt_at <= now()
    AND (locked_until IS NULL OR locked_until <= now())
    AND attempts < $5
    AND ($4::text[] IS NULL OR topic = ANY ($4::text[]))
  ORDER BY next_attempt_at
  LIMIT $1
  FOR UPDATE SKIP LOCKED
)
UPDATE retrysafe_outbox AS o
SET locked_until = now() + make_interval(secs => $2),
    claim_token = $3,
    attempts = o.attempts + 1
FROM due
WHERE o.id = due.id
RETURNING o.id, o.topic, o.headers, o.payload, o.attempts, o.created_at`;

/**
 * Parks messages that used up their attempts without ever being marked published or failed:
 * their relay died while holding them, every time.
 * $1 most attempts, $2 batch size, $3 topics or null for all.
 */
export const PARK_ABANDONED = `
WITH abandoned AS (
  SELECT id FROM retrysafe_outbox
  WHERE state = 'pending' AND attempts >= $1 AND locked_until <= now()
    AND ($3::text[] IS NULL OR topic = ANY ($3::text[]))
  LIMIT $2
  FOR UPDATE SKIP LOCKED
)
UPDATE retrysafe_outbox AS o
SET state = 'dead', parked_at = now(), locked_until = NULL, claim_token = NULL,
    last_error = coalesce(o.last_error, 'The relay stopped while publishing, on every attempt.')
FROM abandoned
WHERE o.id = abandoned.id
RETURNING o.id`;

/**
 * The broker has the message. Not conditional on the claim: a relay whose
 * lease ran out did publish, and saying so is true whoever says it.
 * $1 id.
 */
export const MARK_DELIVERED = `
UPDATE retrysafe_outbox
SET state = 'delivered', delivered_at = now(), locked_until = NULL, claim_token = NULL
WHERE id = $1 AND state = 'pending'`;

/** A failed publish, retried after a backoff. Only the claim's holder may. $1 id, $2 claim token, $3 delay seconds, $4 error. */
export const RESCHEDULE = `
UPDATE retrysafe_outbox
SET next_attempt_at = now() + make_interval(secs => $3), locked_until = NULL, claim_token = NULL, last_error = $4
WHERE id = $1 AND claim_token = $2 AND state = 'pending'`;

/** A failed publish on the last attempt: the message becomes a dead letter. $1 id, $2 claim token, $3 error. */
export const PARK = `
UPDATE retrysafe_outbox
SET state = 'dead', parked_at = now(), locked_until = NULL, claim_token = NULL, last_error = $3
WHERE id = $1 AND claim_token = $2 AND state = 'pending'`;

/** Dead letters, most recently parked first. $1 limit, $2 topic or null for all. */
export const DEAD_LETTERS = `
SELECT id, topic, headers, payload, attempts, last_error, created_at, parked_at
FROM retrysafe_outbox
WHERE state = 'dead' AND ($2::text IS NULL OR topic = $2)
ORDER BY parked_at DESC
LIMIT $1`;

/** An operator sends a dead letter again, with a fresh count of attempts. $1 id. */
export const RETRY_DEAD_LETTER = `
UPDATE retrysafe_outbox
SET state = 'pending', parked_at = NULL, attempts = 0, next_attempt_at = now()
WHERE id = $1 AND state = 'dead'
RETURNING id, ${NOTIFY}`;

/**
 * Counts for monitoring: what waits, what is dead, how old the oldest waiting
 * message is. One state at a time, so that each is read from its partial index,
 * never a scan of the delivered messages.
 */
export const BACKLOG = `
SELECT waiting.pending, parked.dead,
       coalesce(extract(epoch FROM now() - waiting.oldest), 0)::float8 AS oldest_pending_seconds
FROM (SELECT count(*)::int AS pending, min(created_at) AS oldest FROM retrysafe_outbox WHERE state = 'pending') AS waiting,
     (SELECT count(*)::int AS dead FROM retrysafe_outbox WHERE state = 'dead') AS parked`;

/**
 * One batch of delivered messages older than the retention, oldest first. $1
 * seconds, $2 batch size. ORDER BY the index's column keeps the walk on the
 * index whatever the statistics say: unordered, once they counted a tenth of
 * the table as old, a batch with nothing left to prune read the whole table.
 */
export const PRUNE_OUTBOX = `
WITH pruned AS (
  DELETE FROM retrysafe_outbox
  WHERE id IN (
    SELECT id FROM retrysafe_outbox
    WHERE state = 'delivered' AND delivered_at < now() - make_interval(secs => $1)
    ORDER BY delivered_at
    LIMIT $2
  )
  RETURNING 1
)
SELECT count(*)::int AS count FROM pruned`;
