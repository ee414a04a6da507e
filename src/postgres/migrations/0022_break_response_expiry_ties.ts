import type { Migration } from './migration.js';

/** Migration 0022. Its SQL is kept as written: never edit a released migration, add a new one. */
export const breakResponseExpiryTies: Migration = {
  version: 22,
  name: 'break_response_expiry_ties',
  sql: String.raw`-- The tombstone step walks the index of response expiries from where its
-- previous batch stopped. A tombstone keeps its entry there, and the records
-- one transaction wrote (a bulk import, say) share one expiry: with the time
-- alone, each batch walked again over every tombstone the batches before it
-- had made at that time. The record's identity after the time gives every
-- entry its own place, so each batch walks on from its last row. The
-- identity never changes, so a tombstone is still rewritten in place.
--
-- The mark of migration 0020 becomes a place in that order too: every
-- completed or failed record before it is a tombstone. A batch then looks
-- for rows another sweeper held only among the rows it walked, not among
-- every record that shares the mark's time.
ALTER TABLE retrysafe_sweep_progress
    ADD COLUMN tenant text NOT NULL DEFAULT '',
    ADD COLUMN operation text NOT NULL DEFAULT '',
    ADD COLUMN key text NOT NULL DEFAULT '';

CREATE OR REPLACE FUNCTION retrysafe_response_arrived_expired() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    UPDATE retrysafe_sweep_progress
    SET responses_before = NEW.response_expires_at, tenant = NEW.tenant, operation = NEW.operation, key = NEW.key
    WHERE (responses_before, tenant, operation, key) > (NEW.response_expires_at, NEW.tenant, NEW.operation, NEW.key);
    RETURN NULL;
END
$$;
--
-- Built in the migration's transaction, which holds off writes to the table
-- while it builds. On a large table, build it first with CREATE INDEX
-- CONCURRENTLY and this definition: the migration then keeps it as it is.
CREATE INDEX IF NOT EXISTS retrysafe_operations_sweep_responses_keyed
    ON retrysafe_operations (response_expires_at, tenant, operation, key);
DROP INDEX retrysafe_operations_sweep_responses;
ALTER INDEX retrysafe_operations_sweep_responses_keyed RENAME TO retrysafe_operations_sweep_responses;
`,
};
