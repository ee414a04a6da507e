import type { Migration } from './migration.js';

/** Migration 0005. Its SQL is kept as written: never edit a released migration, add a new one. */
export const domainChecks: Migration = {
  version: 5,
  name: 'domain_checks',
  sql: String.raw`-- The same rules, checked at a fraction of the cost. PostgreSQL reads a
-- table's CHECK constraints back from their stored form for every INSERT and
-- UPDATE, so fifteen of them made a claim and its completion cost about twice
-- their work. A domain's checks are read once per session. So every rule on a
-- single column becomes a domain, and the rules that tie the columns to the
-- state become one CHECK.
--
-- The domains start without their checks, so that changing a column's type
-- rewrites neither the table nor its indexes; adding a check to a domain then
-- only reads the rows, which the table's own checks already held to the rule.

CREATE DOMAIN retrysafe_name AS text;
CREATE DOMAIN retrysafe_operation_name AS text;
CREATE DOMAIN retrysafe_fingerprint AS bytea;
CREATE DOMAIN retrysafe_record_state AS text;
CREATE DOMAIN retrysafe_mode AS text;
CREATE DOMAIN retrysafe_positive AS integer;
CREATE DOMAIN retrysafe_status AS smallint;
CREATE DOMAIN retrysafe_resource_ref AS text;
CREATE DOMAIN retrysafe_long_text AS text;
CREATE DOMAIN retrysafe_step_name AS text;
CREATE DOMAIN retrysafe_non_negative AS integer;
CREATE DOMAIN retrysafe_json_object AS jsonb;
CREATE DOMAIN retrysafe_outbox_state AS text;
CREATE DOMAIN retrysafe_webhook_state AS text;

ALTER TABLE retrysafe_operations
    DROP CONSTRAINT retrysafe_operations_tenant_check,
    DROP CONSTRAINT retrysafe_operations_operation_check,
    DROP CONSTRAINT retrysafe_operations_key_check,
    DROP CONSTRAINT retrysafe_operations_fingerprint_check,
    DROP CONSTRAINT retrysafe_operations_state_check,
    DROP CONSTRAINT retrysafe_operations_mode_check,
    DROP CONSTRAINT retrysafe_operations_attempt_check,
    DROP CONSTRAINT retrysafe_operations_fencing_token_check,
    DROP CONSTRAINT retrysafe_operations_response_status_check,
    DROP CONSTRAINT retrysafe_operations_resource_ref_check,
    DROP CONSTRAINT retrysafe_operations_reason_check,
    DROP CONSTRAINT retrysafe_operations_in_progress,
    DROP CONSTRAINT retrysafe_operations_finished,
    DROP CONSTRAINT retrysafe_operations_unknown,
    DROP CONSTRAINT retrysafe_operations_tombstone,
    ALTER COLUMN tenant TYPE retrysafe_name,
    ALTER COLUMN operation TYPE retrysafe_operation_name,
    ALTER COLUMN key TYPE retrysafe_name,
    ALTER COLUMN fingerprint TYPE retrysafe_fingerprint,
    ALTER COLUMN state TYPE retrysafe_record_state,
    ALTER COLUMN mode TYPE retrysafe_mode,
    ALTER COLUMN attempt TYPE retrysafe_positive,
    ALTER COLUMN fencing_token TYPE retrysafe_positive,
    ALTER COLUMN response_status TYPE retrysafe_status,
    ALTER COLUMN resource_ref TYPE retrysafe_resource_ref,
    ALTER COLUMN reason TYPE retrysafe_long_text,
    -- What each state requires of the other columns. Atomic mode inserts
    -- in_progress without a lease and never commits it.
    ADD CONSTRAINT retrysafe_operations_state_shape CHECK (CASE state
        WHEN 'in_progress' THEN response_status IS NULL AND (owner_token IS NULL) = (lease_expires_at IS NULL)
        WHEN 'unknown' THEN reason IS NOT NULL
        WHEN 'tombstone' THEN response_status IS NOT NULL AND response_body IS NULL AND expires_at IS NOT NULL
        -- completed and failed
        ELSE num_nulls(response_status, response_headers, response_body, finished_at, response_expires_at, expires_at) = 0
    END);

ALTER TABLE retrysafe_steps
    DROP CONSTRAINT retrysafe_steps_step_check,
    ALTER COLUMN step TYPE retrysafe_step_name;

-- The outbox and the webhook events keep small indexes of their states, rebuilt
-- here because they filter on ${'`'}state${'`'}; the tables themselves are not rewritten.
ALTER TABLE retrysafe_outbox
    DROP CONSTRAINT retrysafe_outbox_topic_check,
    DROP CONSTRAINT retrysafe_outbox_headers_check,
    DROP CONSTRAINT retrysafe_outbox_state_check,
    DROP CONSTRAINT retrysafe_outbox_attempts_check,
    DROP CONSTRAINT retrysafe_outbox_last_error_check,
    ALTER COLUMN topic TYPE retrysafe_name,
    ALTER COLUMN headers TYPE retrysafe_json_object,
    ALTER COLUMN state TYPE retrysafe_outbox_state,
    ALTER COLUMN attempts TYPE retrysafe_non_negative,
    ALTER COLUMN last_error TYPE retrysafe_long_text;

ALTER TABLE retrysafe_inbox
    DROP CONSTRAINT retrysafe_inbox_consumer_check,
    DROP CONSTRAINT retrysafe_inbox_generation_check,
    DROP CONSTRAINT retrysafe_inbox_message_id_check,
    ALTER COLUMN consumer TYPE retrysafe_name,
    ALTER COLUMN generation TYPE retrysafe_positive,
    ALTER COLUMN message_id TYPE retrysafe_name;

ALTER TABLE retrysafe_webhook_events
    DROP CONSTRAINT retrysafe_webhook_events_receiver_check,
    DROP CONSTRAINT retrysafe_webhook_events_id_check,
    DROP CONSTRAINT retrysafe_webhook_events_state_check,
    DROP CONSTRAINT retrysafe_webhook_events_attempts_check,
    DROP CONSTRAINT retrysafe_webhook_events_last_error_check,
    ALTER COLUMN receiver TYPE retrysafe_name,
    ALTER COLUMN id TYPE retrysafe_name,
    ALTER COLUMN state TYPE retrysafe_webhook_state,
    ALTER COLUMN attempts TYPE retrysafe_non_negative,
    ALTER COLUMN last_error TYPE retrysafe_long_text;

ALTER DOMAIN retrysafe_name ADD CHECK (octet_length(VALUE) BETWEEN 1 AND 255);
ALTER DOMAIN retrysafe_operation_name ADD CHECK (octet_length(VALUE) BETWEEN 3 AND 255);
ALTER DOMAIN retrysafe_fingerprint ADD CHECK (octet_length(VALUE) = 32);
ALTER DOMAIN retrysafe_record_state ADD CHECK (VALUE IN ('in_progress', 'completed', 'failed', 'unknown', 'tombstone'));
ALTER DOMAIN retrysafe_mode ADD CHECK (VALUE IN ('atomic', 'leased', 'transparent'));
ALTER DOMAIN retrysafe_positive ADD CHECK (VALUE >= 1);
ALTER DOMAIN retrysafe_status ADD CHECK (VALUE BETWEEN 200 AND 599);
ALTER DOMAIN retrysafe_resource_ref ADD CHECK (octet_length(VALUE) <= 2048);
ALTER DOMAIN retrysafe_long_text ADD CHECK (octet_length(VALUE) <= 4096);
ALTER DOMAIN retrysafe_step_name ADD CHECK (octet_length(VALUE) BETWEEN 1 AND 200);
ALTER DOMAIN retrysafe_non_negative ADD CHECK (VALUE >= 0);
ALTER DOMAIN retrysafe_json_object ADD CHECK (jsonb_typeof(VALUE) = 'object');
ALTER DOMAIN retrysafe_outbox_state ADD CHECK (VALUE IN ('pending', 'delivered', 'dead'));
ALTER DOMAIN retrysafe_webhook_state ADD CHECK (VALUE IN ('received', 'processed', 'dead'));
`,
};
