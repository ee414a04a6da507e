import type { Migration } from './migration.js';

/**
 * Migration 0015. Its SQL is kept as written:
 * never edit a released migration, add a new one.
 */
export const failedActivity: Migration = {
  version: 15,
  name: 'failed_activity',
  sql: String.raw`-- The console counts failed attempts too: those whose handler threw or
-- answered a status the policy does not keep. The kind's rule gains
-- 'failed'. The new rule is added NOT VALID, a catalogue change, and then
-- validated, which reads the table's rows once; the table holds one row per
-- hour, operation and kind, so the read is short, and no other table is
-- touched.
ALTER TABLE retrysafe_activity
    DROP CONSTRAINT retrysafe_activity_kind_check,
    ADD CONSTRAINT retrysafe_activity_kind_check
        CHECK (kind IN ('new', 'replay', 'mismatch', 'conflict', 'unknown', 'failed')) NOT VALID;
ALTER TABLE retrysafe_activity VALIDATE CONSTRAINT retrysafe_activity_kind_check;
`,
};
