import type { OperationIdentity } from '../../core/identity.js';
import type { OperationMode, OperationRecord, RecordState } from '../../core/record.js';

/** The stored columns of a record, in this order. */
const STORED = [
  'state',
  'mode',
  'fingerprint',
  'principal',
  'created_at',
  'lease_expires_at',
  'attempt',
  'fencing_token',
  'response_status',
  'response_headers',
  'response_body',
  'response_omitted',
  'finished_at',
  'response_expires_at',
  'resource_ref',
  'reason',
] as const;

/** The stored columns that are times. */
const TIMES: ReadonlySet<string> = new Set(['created_at', 'lease_expires_at', 'finished_at', 'response_expires_at']);

/**
 * A time as the whole milliseconds since the epoch a JavaScript Date holds (the stored microseconds cut, as a
 * driver's own parse of a timestamptz cuts them), as float8: every driver reads it as a number, where a
 * timestamptz's text costs node-postgres a parse by regular expressions on every replay.
 */
function epochMs(time: string): string {
  return `floor(extract(epoch FROM ${time}) * 1000)::float8`;
}

/**
 * The stored columns of a record as a RETURNING clause lists them. Without the time it was read, and with its times
 * as they are: Citus refuses a function that is not IMMUTABLE, such as now() or extract() on a timestamptz, there.
 */
export const STORED_RECORD_COLUMNS = STORED.map((column) => `o.${column}`).join(', ');

/**
 * The columns every statement that returns a record selects, in this order, from `table` (the operations table, or
 * rows a RETURNING clause gave back as `STORED_RECORD_COLUMNS`): the times as `epochMs` and the time it was read.
 */
export function recordColumns(table: string): string {
  const stored = STORED.map((column) =>
    TIMES.has(column) ? `${epochMs(`${table}.${column}`)} AS ${column}` : `${table}.${column}`,
  );
  return `${stored.join(', ')}, ${epochMs('now()')} AS read_at`;
}

/** The identity's values as $1 tenant, $2 operation, $3 key. */
export function ids(identity: OperationIdentity): [string, string, string] {
  return [identity.tenant, identity.operation, identity.key];
}

/** A record as `recordColumns` selects it; times in milliseconds since the epoch. */
export interface RecordRow {
  readonly state: RecordState;
  readonly mode: OperationMode;
  readonly fingerprint: Uint8Array;
  readonly principal: Uint8Array | null;
  readonly created_at: number;
  readonly read_at: number;
  readonly lease_expires_at: number | null;
  readonly attempt: number;
  readonly fencing_token: number;
  readonly response_status: number | null;
  /** A header's lines: a string, or a list for several (rows written before lists were kept hold strings only). */
  readonly response_headers: Record<string, string | string[]> | null;
  readonly response_body: Uint8Array | null;
  readonly response_omitted: boolean;
  readonly finished_at: number | null;
  readonly response_expires_at: number | null;
  readonly resource_ref: string | null;
  readonly reason: string | null;
}

export function toRecord(identity: OperationIdentity, row: RecordRow): OperationRecord {
  const readAt = new Date(row.read_at);
  const base = {
    identity,
    mode: row.mode,
    fingerprint: row.fingerprint,
    principal: row.principal ?? undefined,
    createdAt: new Date(row.created_at),
    readAt,
  };
  switch (row.state) {
    case 'in_progress':
      return {
        state: row.state,
        ...base,
        leaseExpiresAt: timeOr(row.lease_expires_at, readAt),
        attempt: row.attempt,
        fencingToken: row.fencing_token,
      };
    case 'completed':
    case 'failed':
      return {
        state: row.state,
        ...base,
        completedAt: timeOr(row.finished_at, readAt),
        responseExpiresAt: timeOr(row.response_expires_at, readAt),
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

function timeOr(ms: number | null, otherwise: Date): Date {
  return ms === null ? otherwise : new Date(ms);
}
