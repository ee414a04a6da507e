import type { Migration } from './migration.js';

/** Migration 0003. Its SQL is kept as written: never edit a released migration, add a new one. */
export const outboxInbox: Migration = {
  version: 3,
  name: 'outbox_inbox',
  sql: String.raw`-- Transactional outbox: a message is written in the transaction of the
-- business change that caused it, so both commit or neither does. A relay
-- publishes it afterwards, at least once, always under the same id.
CREATE TABLE retrysafe_outbox (
    id uuid PRIMARY KEY,
    topic text NOT NULL CHECK (octet_length(topic) BETWEEN 1 AND 255),
    headers jsonb NOT NULL DEFAULT '{}' CHECK (jsonb_typeof(headers) = 'object'),
    payload jsonb NOT NULL,
    state text NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'delivered', 'dead')),
    -- One more each time a relay claims the message, so that a message whose
    -- relay keeps dying is parked too, not retried forever.
    attempts integer NOT NULL DEFAULT 0 CHECK (attempts >= 0),
    -- Backoff: the message is not claimed again before this time.
    next_attempt_at timestamptz NOT NULL DEFAULT now(),
    -- A relay's claim. Other relays skip the message until it runs out, and
    -- only the claim's holder may reschedule or park it.
    locked_until timestamptz,
    claim_token uuid,
    last_error text CHECK (octet_length(last_error) <= 4096),
    created_at timestamptz NOT NULL DEFAULT now(),
    delivered_at timestamptz,
    parked_at timestamptz,
    CONSTRAINT retrysafe_outbox_delivered CHECK ((state = 'delivered') = (delivered_at IS NOT NULL)),
    CONSTRAINT retrysafe_outbox_dead CHECK ((state = 'dead') = (parked_at IS NOT NULL))
);

-- Relays claim due messages; the pruner deletes delivered ones by age; operators list dead letters.
CREATE INDEX retrysafe_outbox_due ON retrysafe_outbox (next_attempt_at) WHERE state = 'pending';
CREATE INDEX retrysafe_outbox_delivered ON retrysafe_outbox (delivered_at) WHERE state = 'delivered';
CREATE INDEX retrysafe_outbox_dead ON retrysafe_outbox (parked_at) WHERE state = 'dead';

-- Consumer inbox: one row per message a consumer has processed, written in
-- the transaction of the consumer's own writes. A redelivered message finds
-- its row and changes nothing. Several consumers of one message each have one.
CREATE TABLE retrysafe_inbox (
    consumer text NOT NULL CHECK (octet_length(consumer) BETWEEN 1 AND 255),
    -- A deliberate rebuild of a projection starts a new generation, so that
    -- the records of the old one do not suppress the work it must redo.
    generation integer NOT NULL DEFAULT 1 CHECK (generation >= 1),
    -- Not a uuid: broker and webhook ids come in many forms.
    message_id text NOT NULL CHECK (octet_length(message_id) BETWEEN 1 AND 255),
    processed_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (consumer, generation, message_id)
);

CREATE INDEX retrysafe_inbox_processed ON retrysafe_inbox (processed_at);

-- Verified incoming webhooks, recorded before the sender gets its 2xx and
-- processed later through the inbox. The key deduplicates redeliveries.
CREATE TABLE retrysafe_webhook_events (
    receiver text NOT NULL CHECK (octet_length(receiver) BETWEEN 1 AND 255),
    -- The sender's ${'`'}webhook-id${'`'}.
    id text NOT NULL CHECK (octet_length(id) BETWEEN 1 AND 255),
    payload jsonb NOT NULL,
    -- The sender's ${'`'}webhook-timestamp${'`'}, for ordering decisions in handlers.
    sent_at timestamptz NOT NULL,
    received_at timestamptz NOT NULL DEFAULT now(),
    state text NOT NULL DEFAULT 'received' CHECK (state IN ('received', 'processed', 'dead')),
    attempts integer NOT NULL DEFAULT 0 CHECK (attempts >= 0),
    next_attempt_at timestamptz NOT NULL DEFAULT now(),
    last_error text CHECK (octet_length(last_error) <= 4096),
    processed_at timestamptz,
    PRIMARY KEY (receiver, id),
    CONSTRAINT retrysafe_webhook_events_processed CHECK ((state = 'processed') = (processed_at IS NOT NULL))
);

CREATE INDEX retrysafe_webhook_events_due ON retrysafe_webhook_events (receiver, next_attempt_at) WHERE state = 'received';
CREATE INDEX retrysafe_webhook_events_processed ON retrysafe_webhook_events (processed_at) WHERE state = 'processed';
`,
};
