import type { OperationIdentity } from '../../core/identity.js';
import type { OperationMode, OperationRecord, RecordState } from '../../core/record.js';

/**
 * The stored columns of a record, in this order. Without the time it was read: Citus refuses a function that is not
 * IMMUTABLE, such as now(), in the RETURNING clause of a statement on a distributed table.
 */
export const STORED_RECORD_COLUMNS = `o.state, o.mode, o.fingerprint, o.principal, o.created_at,
  o.lease_expires_at, o.attempt, o.fencing_token, o.response_status, o.response_headers,
  o.response_body, o.response_omitted, o.finished_at, o.response_expires_at, o.resource_ref, o.reason`;

/** The columns every statement that returns a record selects, in this order. */
export const RECORD_COLUMNS = `${STORED_RECORD_COLUMNS}, now() AS read_at`;

/** The identity's values as $1 tenant, $2 operation, $3 key. */
export function ids(identity: OperationIdentity): [string, string, string] {
  return [identity.tenant, identity.operation, identity.key];
}

export interface RecordRow {
  readonly state: RecordState;
  readonly mode: OperationMode;
  readonly fingerprint: Uint8Array;
  readonly principal: Uint8Array | null;
  readonly created_at: Date;
  readonly read_at: Date;
  readonly lease_expires_at: Date | null;
  readonly attempt: number;
  readonly fencing_token: number;
  readonly response_status: number | null;
  /** A header's lines: a string, or a list for several (rows written before lists were kept hold strings only). */
  readonly response_headers: Record<string, string | string[]> | null;
  readonly response_body: Uint8Array | null;
  readonly response_omitted: boolean;
  readonly finished_at: Date | null;
  readonly response_expires_at: Date | null;
  readonly resource_ref: string | null;
  readonly reason: string | null;
}

export function toRecord(identity: OperationIdentity, row: RecordRow): OperationRecord {
  const base = {
    identity,
    mode: row.mode,
    fingerprint: row.fingerprint,
    principal: row.principal ?? undefined,
    createdAt: row.created_at,
    readAt: row.read_at,
  };
  switch (row.state) {
    case 'in_progress':
      return {
        state: row.state,
        ...base,
        leaseExpiresAt: row.lease_expires_at ?? row.read_at,
        attempt: row.attempt,
        fencingToken: row.fencing_token,
      };
    case 'completed':
    case 'failed':
      return {
        state: row.state,
        ...base,
        completedAt: row.finished_at ?? row.read_at,
        responseExpiresAt: row.response_expires_at ?? row.read_at,
        responseOmitted: row.response_omitted,
        response: {
          status: row.response_status ?? 500,
          headers: row.response_headers ?? {},
          body: row.response_body ?? new Uint8Array(),
        },
      };
    case 'unknown':
      return { state: row.state, ...base, reason: row.reason ?? '' };
    case 'tombstone':
      return { state: row.state, ...base, status: row.response_status ?? 200, resource: row.resource_ref ?? undefined };
  }
}
