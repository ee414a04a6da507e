import type { Migration } from './migration.js';

/** Migration 0011. Its SQL is kept as written: never edit a released migration, add a new one. */
export const parkedWebhookEvents: Migration = {
  version: 11,
  name: 'parked_webhook_events',
  sql: String.raw`-- Operators requeue parked webhook events as they requeue the outbox's dead
-- letters: only the event as their page showed it, recorded with who and why.

-- When the event was parked: what a requeue must still find, so that a page
-- drawn before another operator requeued it (and it was parked again) changes
-- nothing. A nullable column without a default: a catalogue change only.
-- Events parked before this migration have none, and are requeued as such.
ALTER TABLE retrysafe_webhook_events ADD COLUMN parked_at timestamptz;

-- Parked events and dead letters, a page at a time, most recent first: in the
-- order of the pages, so that a page reads a page of entries and never sorts
-- all of them (the planner cannot tell how many there are: only these have a
-- parking time). Only parked rows have an entry, so live traffic writes none.
CREATE INDEX retrysafe_webhook_events_dead ON retrysafe_webhook_events (received_at, receiver, id) WHERE state = 'dead';
DROP INDEX retrysafe_outbox_dead;
CREATE INDEX retrysafe_outbox_dead ON retrysafe_outbox (parked_at, id) WHERE state = 'dead';

-- An action's subject: an operation, an outbox message, or a webhook event.
ALTER TABLE retrysafe_operator_actions
    ADD COLUMN receiver text,
    ADD COLUMN event_id text,
    DROP CONSTRAINT retrysafe_operator_actions_subject,
    ADD CONSTRAINT retrysafe_operator_actions_subject CHECK (CASE
        WHEN action = 'requeue' THEN num_nulls(tenant, operation, key) = 3
            AND (message_id IS NULL) <> (event_id IS NULL) AND (event_id IS NULL) = (receiver IS NULL)
        ELSE num_nulls(message_id, receiver, event_id) = 3 AND num_nulls(tenant, operation, key) = 0
    END);
`,
};
