import type { Migration } from './migration.js';

/** Migration 0008. Its SQL is kept as written: never edit a released migration, add a new one. */
export const principal: Migration = {
  version: 8,
  name: 'principal',
  sql: String.raw`-- Keys scoped per user: a record keeps a digest of the user who made it
-- (SHA-256 bound to the identity), so that another user of the same tenant who
-- sends the key is refused rather than answered. Never the user itself. NULL
-- for a route that names no user, and for every record written before.
--
-- Cheap on a table of any size: a nullable column without a default is only
-- a catalogue change, and a NULL costs a bit of the row's null bitmap. The
-- domain gets its check after the column and NOT VALID, because a column of a
-- domain that has a check is added by rewriting the table, and validating
-- would read every row under a lock that blocks writes; every row then holds
-- NULL, which the check would let through anyway.
CREATE DOMAIN retrysafe_digest AS bytea;

ALTER TABLE retrysafe_operations ADD COLUMN principal retrysafe_digest;

ALTER DOMAIN retrysafe_digest ADD CONSTRAINT retrysafe_digest_check CHECK (octet_length(VALUE) = 32) NOT VALID;
`,
};
