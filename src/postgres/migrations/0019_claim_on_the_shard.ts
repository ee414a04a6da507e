import type { Migration } from './migration.js';

/**
 * Migration 0019. Its SQL is kept as written:
 * never edit a released migration, add a new one.
 */
export const claimOnTheShard: Migration = {
  version: 19,
  name: 'claim_on_the_shard',
  sql: String.raw`-- On a distributed PostgreSQL (Citus) atomic mode's claim names the
-- operation table, filtered on the tenant, so that the whole statement runs on
-- the worker holding the tenant's shard: the advisory lock is taken there,
-- where every attempt of the identity meets it, whichever node its client
-- reached. retrysafe_operation_exists (migration 0012) then runs on that
-- worker inside the shard's query, where Citus refuses a query of a
-- distributed table unless nested execution is allowed; the tenant is the
-- shard's own, so the query is executed locally, in the same transaction.
-- Only where Citus is installed: PostgreSQL lets no role but a superuser set a
-- parameter it does not know, and a SET clause would cost every claim a
-- setting saved and restored. distribute() sets it too, for Citus installed
-- after this migration.
DO $$
BEGIN
    IF EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'citus') THEN
        ALTER FUNCTION retrysafe_operation_exists(text, text, text)
            SET citus.allow_nested_distributed_execution = on;
    END IF;
END
$$;
`,
};
