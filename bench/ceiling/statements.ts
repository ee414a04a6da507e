import { fingerprint } from '../../src/core/fingerprint.js';
import { completionOf, resolvePolicy } from '../../src/core/storage-policy.js';
import { toReply } from '../../src/core/answer/reply.js';
import { claimAtomicValues } from '../../src/postgres/sql/claim-atomic.js';
import { completeAtomicValues } from '../../src/postgres/sql/complete-atomic.js';
import { ids } from '../../src/postgres/sql/record-row.js';
import { completionValues } from '../../src/postgres/sql/completion.js';
import { defaultRetention } from '../../src/core/retention.js';
import { ORDER_BODY, TENANT } from '../request.js';

/**
 * The values retrysafe binds for one order in atomic mode: the same
 * fingerprint and stored answer as scenario B, so only the key changes.
 */
const ORDER_OPERATION = 'orders.create@1';
const ORDER_FINGERPRINT = fingerprint({ method: 'POST', path: '/orders', body: JSON.parse(ORDER_BODY) as unknown });
const ORDER_COMPLETION = completionOf(
  toReply({
    status: 201,
    headers: { location: '/orders/1' },
    body: { id: '1', ...(JSON.parse(ORDER_BODY) as object) },
  }),
  resolvePolicy(),
  defaultRetention,
);

const claimRequest = (key: string) => ({
  identity: { tenant: TENANT, operation: ORDER_OPERATION, key },
  fingerprint: ORDER_FINGERPRINT,
  lockTimeoutMs: 3000,
  statementTimeoutMs: 30_000,
});

/** The values of CLAIM_ATOMIC; $3 is the key. */
export function claimValues(key: string): unknown[] {
  return claimAtomicValues(claimRequest(key));
}

/** The values of COMPLETE_ATOMIC; $3 is the key. */
export function completeValues(key: string): unknown[] {
  return completeAtomicValues(claimRequest(key), ORDER_COMPLETION);
}

/**
 * A transaction-scoped advisory lock on the identity, in the statement that
 * reads its record: what a design that writes the record once, at the end,
 * would wait on instead of the primary key. $1 tenant, $2 operation, $3 key.
 */
export const LOCK_IDENTITY = `SELECT pg_advisory_xact_lock(hashtextextended($1 || '/' || $2 || '/' || $3, 0)) AS locked,
  (SELECT state FROM retrysafe_operations WHERE tenant = $1 AND operation = $2 AND key = $3) AS state`;

/**
 * The finished record written once, at the end of the transaction; the
 * primary key still decides between two attempts.
 * $1 tenant, $2 operation, $3 key, $4 fingerprint, then the outcome from $5 (see `outcomeValues`).
 */
export const FINISHED_RECORD = `INSERT INTO retrysafe_operations (tenant, operation, key, fingerprint, state, response_status, response_headers,
  response_body, resource_ref, response_expires_at, expires_at, response_omitted, finished_at)
VALUES ($1, $2, $3, $4::bytea, $5, $6, $7::text::jsonb, $8, $9, now() + make_interval(secs => $10), now() + make_interval(secs => $11), $12, now())
ON CONFLICT (tenant, operation, key) DO NOTHING`;

/** The values of LOCK_IDENTITY; $3 is the key. */
export function lockValues(key: string): unknown[] {
  return ids({ tenant: TENANT, operation: ORDER_OPERATION, key });
}

/** The values of FINISHED_RECORD; $3 is the key. */
export function finishedValues(key: string): unknown[] {
  return [
    ...ids({ tenant: TENANT, operation: ORDER_OPERATION, key }),
    ORDER_FINGERPRINT,
    ...completionValues(ORDER_COMPLETION),
  ];
}

/**
 * The least a record can be: a row of a narrow table with only the identity,
 * its primary key. What one more row costs the transaction, whatever the
 * record holds.
 */
export const KEY_ROWS_TABLE = `CREATE TABLE IF NOT EXISTS bench_keys (
  tenant text NOT NULL,
  operation text NOT NULL,
  key text NOT NULL,
  PRIMARY KEY (tenant, operation, key)
)`;

/** $1 tenant, $2 operation, $3 key: the values of `lockValues`. */
export const KEY_ROW = 'INSERT INTO bench_keys (tenant, operation, key) VALUES ($1, $2, $3)';

/** The identity's transaction-scoped advisory lock alone, as plain SQL, on the key the claim takes. $1 tenant, $2 operation, $3 key. */
export const PLAIN_LOCK = 'SELECT pg_advisory_xact_lock(retrysafe_lock_key($1, $2, $3))';

/**
 * Takes the rules off a migrated schema's record table, for the physical
 * bench's `unruled` shape only: every column typed by one of retrysafe's
 * domains gets the domain's base type, and every CHECK (the one on each
 * state's columns, the last error's bound) goes. Indexes, defaults and NOT
 * NULL stay. What is left is the same row, written without the checks
 * PostgreSQL runs on every INSERT.
 */
export const UNRULE_RECORDS = `
DO $$
DECLARE typed record;
BEGIN
  FOR typed IN SELECT conname FROM pg_constraint WHERE conrelid = 'retrysafe_operations'::regclass AND contype = 'c'
  LOOP
    EXECUTE format('ALTER TABLE retrysafe_operations DROP CONSTRAINT %I', typed.conname);
  END LOOP;
  FOR typed IN SELECT column_name, data_type FROM information_schema.columns
               WHERE table_schema = current_schema() AND table_name = 'retrysafe_operations' AND domain_name IS NOT NULL
  LOOP
    EXECUTE format('ALTER TABLE retrysafe_operations ALTER COLUMN %I TYPE %s', typed.column_name, typed.data_type);
  END LOOP;
END $$`;
