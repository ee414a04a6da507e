import type { Migration } from './migration.js';

/**
 * Migration 0016. Its SQL is kept as written: never
 * edit a released migration, add a new one.
 */
export const lastError: Migration = {
  version: 16,
  name: 'last_error',
  sql: String.raw`-- The error of an operation's last failed attempt, beside its count of
-- failures, so that an operator sees why it is backing off or gave up
-- without the application's logs. NULL until an attempt fails.
--
-- Cheap on a table of any size: a nullable column without a default is only
-- a catalogue change. Its check is added NOT VALID, so no row is read under
-- the lock; every row holds NULL, which the check lets through anyway.
ALTER TABLE retrysafe_operations ADD COLUMN last_error text;

ALTER TABLE retrysafe_operations
    ADD CONSTRAINT retrysafe_operations_last_error_check CHECK (octet_length(last_error) <= 4096) NOT VALID;
`,
};
