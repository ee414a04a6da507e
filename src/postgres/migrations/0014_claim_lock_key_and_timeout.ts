import type { Migration } from './migration.js';

/** Migration 0014. Its SQL is kept as written: never edit a released migration, add a new one. */
export const claimLockKeyAndTimeout: Migration = {
  version: 14,
  name: 'claim_lock_key_and_timeout',
  sql: String.raw`-- The key of the advisory lock atomic mode's claim takes on an identity: the
-- first 8 bytes of SHA-256 over it, each part after its length in bytes, so no
-- part can run into the next, and after a name of its own, so it equals no
-- other digest of the same parts (the record's principal digest is taken the
-- same way). It was PostgreSQL's 64-bit Jenkins hash (hashtextextended), which
-- is not collision-resistant: a tenant could choose keys whose lock is another
-- tenant's, and that tenant's claims then found their lock held and answered
-- 409.
CREATE FUNCTION retrysafe_lock_key(p_tenant text, p_operation text, p_key text)
RETURNS bigint LANGUAGE sql STABLE PARALLEL SAFE AS $$
    SELECT ('x' || encode(substring(sha256(convert_to(
        '17:retrysafe lock v1'
        || octet_length(p_tenant)::text || ':' || p_tenant
        || octet_length(p_operation)::text || ':' || p_operation
        || octet_length(p_key)::text || ':' || p_key, 'UTF8')) FROM 1 FOR 8), 'hex'))::bit(64)::bigint
$$;

-- The statement_timeout of the rest of a claim's transaction: the smaller of
-- p_limit (statementTimeoutMs) and the session's, which a DBA may have set
-- for the role or the connection; 0 is no limit, never the smaller. Raising
-- it to p_limit would lift the DBA's limit off the handler's statements.
-- Both are compared as intervals: the setting reads back with a unit
-- ('200ms', '1min'). No FROM, so PostgreSQL inlines it into the claim.
CREATE FUNCTION retrysafe_limit_statement_timeout(p_limit text)
RETURNS text LANGUAGE sql VOLATILE AS $$
    SELECT set_config('statement_timeout',
        CASE WHEN p_limit IS NULL OR p_limit::interval = interval '0'
             THEN current_setting('statement_timeout')
             WHEN current_setting('statement_timeout')::interval = interval '0'
                  OR p_limit::interval < current_setting('statement_timeout')::interval
             THEN p_limit
             ELSE current_setting('statement_timeout') END,
        true)
$$;

-- Versions before the claim was plain SQL call this function: they lock the
-- same key as this version's claim, and keep the session's tighter limit.
CREATE OR REPLACE FUNCTION retrysafe_lock_operation(
    p_tenant text, p_operation text, p_key text, p_lock_timeout text, p_statement_timeout text,
    OUT waited boolean, OUT holder retrysafe_operations)
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
    identity_hash bigint := retrysafe_lock_key(p_tenant, p_operation, p_key);
    session_lock_timeout text := current_setting('lock_timeout');
BEGIN
    PERFORM retrysafe_limit_statement_timeout(p_statement_timeout);
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
