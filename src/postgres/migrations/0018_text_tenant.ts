import type { Migration } from './migration.js';

/**
 * Migration 0018. Its SQL is kept as written:
 * never edit a released migration, add a new one.
 */
export const textTenant: Migration = {
  version: 18,
  name: 'text_tenant',
  sql: String.raw`-- The operation table's tenant goes back to plain text, its rule a CHECK of
-- the table, so that it can be the distribution column of a distributed
-- PostgreSQL (Citus): colocated tables need distribution columns of one type,
-- the steps' tenant and an application's are text, and Citus 13 prunes a
-- column of a domain compared with text to no shard at all, so a lookup by
-- tenant found nothing. A domain to its own base type is binary coercible:
-- neither the table nor its indexes are rewritten. The CHECK is added NOT
-- VALID: every row already held to the same rule through the domain, and new
-- rows are checked.
ALTER TABLE retrysafe_operations
    ALTER COLUMN tenant TYPE text,
    ADD CONSTRAINT retrysafe_operations_tenant_check CHECK (octet_length(tenant) BETWEEN 1 AND 255) NOT VALID;
`,
};
