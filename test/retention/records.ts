import { randomUUID } from 'node:crypto';
import { fingerprint } from '../../src/core/fingerprint.js';
import type { OperationIdentity } from '../../src/core/identity.js';
import type { RecordState, OperationMode } from '../../src/core/record.js';
import { postgresStore } from '../../src/postgres/index.js';
import type { Lease } from '../../src/store/lease-store.js';
import type { SqlClient, SqlDatabase } from '../../src/store/sql-client.js';

/** A record written straight into the table, with its times relative to the database's clock. */
export interface RecordSpec {
  readonly tenant?: string;
  readonly operation?: string;
  readonly key: string;
  readonly state: RecordState;
  readonly mode?: OperationMode;
  /** Seconds from now; negative is in the past. Finished records only. */
  readonly responseExpiresIn?: number;
  /** Seconds from now; negative is in the past. */
  readonly expiresIn?: number;
  /** For `in_progress`: seconds from now; negative is an expired lease. */
  readonly leaseExpiresIn?: number;
  readonly createdAgo?: number;
  readonly resource?: string;
  readonly reason?: string;
  readonly input?: unknown;
}

const INSERT = `
INSERT INTO retrysafe_operations (tenant, operation, key, fingerprint, state, mode, owner_token, lease_expires_at,
  response_status, response_headers, response_body, resource_ref, reason, created_at, finished_at,
  response_expires_at, expires_at, input)
VALUES ($1, $2, $3::text, sha256(convert_to($3::text, 'UTF8')), $4, $5,
  CASE WHEN $6::float8 IS NULL THEN NULL ELSE gen_random_uuid() END, now() + make_interval(secs => $6::float8),
  $7::smallint, $8::jsonb, $9::bytea, $10, $11,
  now() - make_interval(secs => $12::float8), CASE WHEN $7::smallint IS NULL THEN NULL ELSE now() END,
  now() + make_interval(secs => $13::float8), now() + make_interval(secs => $14::float8), $15::jsonb)`;

export const DEFAULT_OPERATION = 'orders.create@1';

export async function insertRecord(database: SqlDatabase<SqlClient>, spec: RecordSpec): Promise<void> {
  const finished = spec.state === 'completed' || spec.state === 'failed';
  const resource = spec.resource ?? null;
  await database.query(INSERT, [
    spec.tenant ?? 'tenant-a',
    spec.operation ?? DEFAULT_OPERATION,
    spec.key,
    spec.state,
    spec.mode ?? 'atomic',
    spec.state === 'in_progress' ? (spec.leaseExpiresIn ?? -1) : null,
    finished || spec.state === 'tombstone' ? 201 : null,
    finished
      ? JSON.stringify({ 'content-type': 'application/json', ...(resource === null ? {} : { location: resource }) })
      : null,
    finished ? Buffer.from(JSON.stringify({ key: spec.key })) : null,
    resource,
    spec.reason ?? (spec.state === 'unknown' ? 'the provider did not answer' : null),
    spec.createdAgo ?? 0,
    finished ? (spec.responseExpiresIn ?? 3600) : (spec.responseExpiresIn ?? null),
    finished || spec.state === 'tombstone' ? (spec.expiresIn ?? 86_400) : (spec.expiresIn ?? null),
    spec.input === undefined ? null : JSON.stringify(spec.input),
  ]);
}

export interface RecordRowView {
  readonly key: string;
  readonly state: RecordState;
  readonly response_status: number | null;
  readonly response_headers: unknown;
  readonly response_body: Uint8Array | null;
  readonly resource_ref: string | null;
}

/** Every record, by key. */
export async function recordsByKey(database: SqlDatabase<SqlClient>): Promise<Map<string, RecordRowView>> {
  const { rows } = await database.query<RecordRowView>(
    'SELECT key, state, response_status, response_headers, response_body, resource_ref FROM retrysafe_operations',
  );
  return new Map(rows.map((row) => [row.key, row]));
}

/**
 * A leased payment of `{ amount: 900 }` whose attempt recorded its `reserve`
 * step, started its `charge` and gave up with `reason`: unknown, resumable,
 * nobody knows whether money moved. Written through the store, as a worker does.
 */
export async function unknownPayment(
  database: SqlDatabase<SqlClient>,
  identity: OperationIdentity,
  reason: string,
): Promise<Lease> {
  const lease = await chargingPayment(database, identity);
  await postgresStore(database).markUnknown(lease, reason);
  return lease;
}

/** A leased payment that started its charge and then failed `failures` times: it backs off for ten minutes. */
export async function backingOffPayment(
  database: SqlDatabase<SqlClient>,
  identity: OperationIdentity,
  failures: number,
  error: string,
): Promise<Lease> {
  const lease = await chargingPayment(database, identity);
  for (let failed = 0; failed < failures; failed += 1)
    await postgresStore(database).release(lease, { delaySeconds: 600, counted: true, error });
  return lease;
}

/** A leased payment claimed now, its reservation done and its charge started. */
async function chargingPayment(database: SqlDatabase<SqlClient>, identity: OperationIdentity): Promise<Lease> {
  const store = postgresStore(database);
  const claim = await store.claimLease({
    identity,
    fingerprint: fingerprint({ amount: 900 }),
    input: { amount: 900 },
    mode: 'leased',
    ownerToken: randomUUID(),
    leaseSeconds: 60,
  });
  if (claim.kind !== 'claimed') throw new Error('expected a new lease');
  await store.checkpoint(claim.lease, 'reserve', { ok: true });
  await store.startStep(claim.lease, 'charge');
  return claim.lease;
}
