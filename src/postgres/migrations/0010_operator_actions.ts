import type { Migration } from './migration.js';

/**
 * Migration 0010 (0008 and 0009 are taken by changes made alongside it). Its
 * SQL is kept as written: never edit a released migration, add a new one.
 */
export const operatorActions: Migration = {
  version: 10,
  name: 'operator_actions',
  sql: String.raw`-- What operators did by hand, who did it and why: kept apart from the records
-- they changed, so that the history of a purged key or a requeued message stays.
CREATE TABLE retrysafe_operator_actions (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    at timestamptz NOT NULL DEFAULT now(),
    -- Who, as the application's own authentication named them.
    actor retrysafe_name NOT NULL,
    action text NOT NULL CHECK (action IN ('resolve', 'retry', 'purge', 'requeue')),
    -- The operation acted on; or, for a requeue, the outbox message.
    tenant text,
    operation text,
    key text,
    message_id uuid,
    reason retrysafe_long_text NOT NULL,
    -- What the record was when the operator decided (its state and fencing
    -- token, or when the message was parked), and what the action set.
    seen jsonb NOT NULL,
    detail jsonb NOT NULL DEFAULT '{}',
    CONSTRAINT retrysafe_operator_actions_subject CHECK (
        (action = 'requeue') = (message_id IS NOT NULL)
        AND (action = 'requeue') = (num_nulls(tenant, operation, key) = 3))
);

CREATE INDEX retrysafe_operator_actions_operation ON retrysafe_operator_actions (tenant, operation, key, at)
    WHERE message_id IS NULL;
CREATE INDEX retrysafe_operator_actions_message ON retrysafe_operator_actions (message_id, at)
    WHERE message_id IS NOT NULL;
`,
};
