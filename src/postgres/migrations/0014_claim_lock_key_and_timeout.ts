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

-- Atomic mode's claim: sets the rest of the transaction's statement_timeout,
-- then tries the identity's lock without waiting. The timeout is the smaller
-- of p_statement_timeout (statementTimeoutMs) and the session's, which a DBA
-- may have set on the role or the connection: raising it would lift their
-- limit off the handler's statements. 0 is no limit, never the smaller. Both
-- are compared as intervals, since the setting reads back with a unit
-- ('200ms', '1min'). A CASE orders the two calls (set_config never returns
-- null); one SELECT without FROM, so PostgreSQL inlines it into the claim.
CREATE FUNCTION retrysafe_claim_lock(p_tenant text, p_operation text, p_key text, p_statement_timeout text)
RETURNS boolean LANGUAGE sql VOLATILE AS $$
    SELECT CASE WHEN set_config('statement_timeout',
        CASE WHEN p_statement_timeout IS NULL OR p_statement_timeout::interval = interval '0'
             THEN current_setting('statement_timeout')
             WHEN current_setting('statement_timeout')::interval = interval '0'
                  OR p_statement_timeout::interval < current_setting('statement_timeout')::interval
             THEN p_statement_timeout
             ELSE current_setting('statement_timeout') END,
        true) IS NOT NULL
    THEN pg_try_advisory_xact_lock(retrysafe_lock_key(p_tenant, p_operation, p_key)) END
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
    waited := NOT retrysafe_claim_lock(p_tenant, p_operation, p_key, p_statement_timeout);
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
