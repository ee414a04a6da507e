import type { Migration } from './migration.js';

/** Migration 0012. Its SQL is kept as written: never edit a released migration, add a new one. */
export const claimReadAfterLock: Migration = {
  version: 12,
  name: 'claim_read_after_lock',
  sql: String.raw`-- Whether a record holds an identity, read with a snapshot of its own. Atomic
-- mode's claim tries the identity's advisory lock and then asks this, in one
-- statement: a plain subquery there would read with the statement's snapshot,
-- taken before the lock. PostgreSQL makes a commit visible before it lets go
-- of the committing transaction's locks, so a claim that started just before
-- the holder committed could find the lock free and no record, and run the
-- handler a second time (the primary key then refuses its record). At READ
-- COMMITTED each query of a VOLATILE PL/pgSQL function takes a new snapshot,
-- so the read sees whatever was committed before the lock was granted. PL/pgSQL
-- rather than SQL: it keeps the query's plan for the session, where an SQL
-- function with a subquery is planned again on every call.
CREATE FUNCTION retrysafe_operation_exists(p_tenant text, p_operation text, p_key text)
RETURNS boolean LANGUAGE plpgsql VOLATILE AS $$
BEGIN
    RETURN EXISTS (SELECT 1 FROM retrysafe_operations AS o
                   WHERE o.tenant = p_tenant AND o.operation = p_operation AND o.key = p_key);
END
$$;
`,
};
