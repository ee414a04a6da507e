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
-- reached. This function then runs on that worker inside the shard's query,
-- where Citus refuses a query of a distributed table unless nested execution
-- is allowed; the tenant is the shard's own, so the query is executed locally,
-- in the same transaction. On plain PostgreSQL the setting is an unused
-- placeholder. Same body and snapshot rule as migration 0012's.
CREATE OR REPLACE FUNCTION retrysafe_operation_exists(p_tenant text, p_operation text, p_key text)
RETURNS boolean LANGUAGE plpgsql VOLATILE SET citus.allow_nested_distributed_execution = on AS $$
BEGIN
    RETURN EXISTS (SELECT 1 FROM retrysafe_operations AS o
                   WHERE o.tenant = p_tenant AND o.operation = p_operation AND o.key = p_key);
END
$$;
`,
};
