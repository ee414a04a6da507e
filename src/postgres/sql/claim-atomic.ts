import type { ClaimRequest } from '../../store/atomic-store.js';
import { statement } from './statement.js';
import { ids, RECORD_COLUMNS } from './record-row.js';

/**
 * Claims an identity inside the caller's transaction: one row, `claimed` true
 * when it did, false when a committed record holds it (read with
 * `READ_RECORD`). Returning nothing else keeps the statement cheap for new
 * keys, the common case; replays are mostly answered by a read before the
 * transaction.
 * Settings, all transaction-local (`set_config(..., true)`) and in this one
 * round trip: `lock_timeout` bounds the wait behind a concurrent claim, then is
 * put back to the session's value (`session`, read before it changed), so the
 * handler's own lock waits are not cut by it; `statement_timeout` ($8, or the
 * session's when null) bounds every later statement on the server. Each CTE
 * reads the one before it, which fixes their order.
 * `waited`, when it claimed nothing: the record is not in this statement's
 * snapshot, so it was committed while the claim ran, by the attempt it waited
 * for; a record committed earlier is a plain replay.
 * The expiry times are those the completion will write: `now()` is the
 * transaction's start, so they come out equal, and the completion can be a
 * HOT update.
 * $1 tenant, $2 operation, $3 key, $4 fingerprint, $5 lock_timeout (e.g. '3000ms'),
 * $6 response seconds, $7 tombstone seconds (or null), $8 statement_timeout (e.g. '30000ms', or null).
 * `$4::bytea`: drivers that encode a value by its parameter's type (PGlite) know bytea, not the column's domain.
 */
export const CLAIM_ATOMIC = statement('retrysafe_claim_atomic', `
WITH session AS MATERIALIZED (SELECT current_setting('lock_timeout') AS lock_timeout),
bounded AS MATERIALIZED (
  SELECT set_config('lock_timeout', $5, true) AS lock_timeout,
         set_config('statement_timeout', coalesce($8, current_setting('statement_timeout')), true) AS statement_timeout
  FROM session),
claim AS (
  INSERT INTO retrysafe_operations (tenant, operation, key, fingerprint, state, response_expires_at, expires_at)
  SELECT $1, $2, $3, $4::bytea, 'in_progress', now() + make_interval(secs => $6), now() + make_interval(secs => $7)
  FROM bounded
  ON CONFLICT (tenant, operation, key) DO NOTHING
  RETURNING true AS claimed)
SELECT count(*) > 0 AS claimed,
       CASE WHEN count(*) = 0 THEN NOT EXISTS (SELECT 1 FROM retrysafe_operations WHERE tenant = $1 AND operation = $2 AND key = $3) END AS waited,
       set_config('lock_timeout', (SELECT lock_timeout FROM session), true) AS lock_timeout
FROM claim`);

/** The values of `CLAIM_ATOMIC` for one request. */
export function claimAtomicValues(request: ClaimRequest): unknown[] {
  const { retention } = request;
  return [...ids(request.identity), request.fingerprint, `${request.lockTimeoutMs}ms`, retention?.responseSeconds ?? null, retention?.tombstoneSeconds ?? null, request.statementTimeoutMs === undefined ? null : `${request.statementTimeoutMs}ms`];
}

/** $1 tenant, $2 operation, $3 key. */
export const READ_RECORD = statement('retrysafe_read_record', `
SELECT ${RECORD_COLUMNS}
FROM retrysafe_operations AS o
WHERE o.tenant = $1 AND o.operation = $2 AND o.key = $3`);
