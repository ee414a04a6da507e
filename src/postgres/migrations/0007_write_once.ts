import type { Migration } from './migration.js';

/** Migration 0007. Its SQL is kept as written: never edit a released migration, add a new one. */
export const writeOnce: Migration = {
  version: 7,
  name: 'write_once',
  sql: String.raw`-- Atomic mode writes its record once, finished, with the commit. Until then a
-- concurrent duplicate has no row to wait on: it waits on a transaction-scoped
-- advisory lock on the identity's 64-bit hash instead, taken by this function
-- in the transaction's first statement. The primary key still decides: the
-- final INSERT fails for an attempt that lost, whatever the lock did (a hash
-- collision only makes two identities wait for each other).
--
-- A function, because at READ COMMITTED a statement's snapshot is taken before
-- a lock it waits for is granted: the read below is a statement of its own, in
-- a VOLATILE function, so it sees what the holder committed before letting go.
-- Settings are transaction-local: statement_timeout bounds the rest of the
-- transaction; lock_timeout bounds only the wait for the lock, then is put back
-- to the session's, so the handler's own lock waits are not cut by it.
-- waited: the lock was held by another transaction when the attempt arrived.
CREATE FUNCTION retrysafe_lock_operation(
    p_tenant text, p_operation text, p_key text, p_lock_timeout text, p_statement_timeout text,
    OUT waited boolean, OUT holder retrysafe_operations)
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
    identity_hash bigint := hashtextextended(p_key, hashtextextended(p_operation, hashtextextended(p_tenant, 0)));
    session_lock_timeout text := current_setting('lock_timeout');
BEGIN
    PERFORM set_config('statement_timeout', coalesce(p_statement_timeout, current_setting('statement_timeout')), true);
    waited := NOT pg_try_advisory_xact_lock(identity_hash);
    IF waited THEN
        PERFORM set_config('lock_timeout', p_lock_timeout, true);
        PERFORM pg_advisory_xact_lock(identity_hash);
        PERFORM set_config('lock_timeout', session_lock_timeout, true);
    END IF;
    SELECT o.* INTO holder FROM retrysafe_operations AS o
    WHERE o.tenant = p_tenant AND o.operation = p_operation AND o.key = p_key;
END
$$;
`,
};
