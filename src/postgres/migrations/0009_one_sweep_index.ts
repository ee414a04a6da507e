import type { Migration } from './migration.js';

/** Migration 0009. Its SQL is kept as written: never edit a released migration, add a new one. */
export const oneSweepIndex: Migration = {
  version: 9,
  name: 'one_sweep_index',
  sql: String.raw`-- One index for the sweeper instead of two: each finished record is in it once,
-- at the time it next needs the sweeper: its response's expiry while it is
-- completed or failed, its own expiry once a tombstone. A new key then writes
-- one index entry for retention instead of two, and a tombstoned record leaves
-- the response part of the index, so no batch reads past the records earlier
-- batches swept. Not partial: the planner keeps statistics of an index's
-- expression only for a whole index, and without them it would guess that a
-- third of the table had expired. Unfinished records have no expiry, and their
-- NULL entries sort after every time. The sweeper's statements name the same
-- expression, word for word.
--
-- Built in the migration's transaction, which holds off writes to the table
-- while it builds. On a large table, build it first with CREATE INDEX
-- CONCURRENTLY and this definition: the migration then keeps it as it is.
CREATE INDEX IF NOT EXISTS retrysafe_operations_sweep ON retrysafe_operations
    ((CASE WHEN state = 'tombstone' THEN expires_at ELSE response_expires_at END));

DROP INDEX retrysafe_operations_response_expiry;
DROP INDEX retrysafe_operations_expiry;
`,
};
