import type { Migration } from './migration.js';

/** Migration 0004. Its SQL is kept as written: never edit a released migration, add a new one. */
export const hotCompletion: Migration = {
  version: 4,
  name: 'hot_completion',
  sql: String.raw`-- An atomic completion rewrites the row its claim inserted moments before, in
-- the same transaction. When no index covers a column the completion changes,
-- nor filters on one, PostgreSQL rewrites the row in place on its page without
-- new index entries (a HOT update): about half the write work of a new key.
-- So no index mentions ${'`'}state${'`'}, the claim already writes the expiry times, and
-- pages keep room for the rewrite.

DROP INDEX retrysafe_operations_response_expiry;
CREATE INDEX retrysafe_operations_response_expiry ON retrysafe_operations (response_expires_at);

DROP INDEX retrysafe_operations_tombstone_expiry;
CREATE INDEX retrysafe_operations_expiry ON retrysafe_operations (expires_at);

-- Atomic rows never hold a lease.
DROP INDEX retrysafe_operations_leases;
CREATE INDEX retrysafe_operations_leases ON retrysafe_operations (lease_expires_at) WHERE lease_expires_at IS NOT NULL;

-- Only an unknown outcome or an operator's resolution gives a row a reason.
DROP INDEX retrysafe_operations_unknown;
CREATE INDEX retrysafe_operations_reasoned ON retrysafe_operations (created_at) WHERE reason IS NOT NULL;

ALTER TABLE retrysafe_operations SET (fillfactor = 80);
`,
};
