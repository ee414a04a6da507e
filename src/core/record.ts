import type { Fingerprint } from './fingerprint.js';
import type { OperationIdentity } from './identity.js';
import type { PrincipalDigest } from './principal.js';
import type { Reply } from './answer/reply.js';

/** The life of an operation record; see docs/architecture.md for the diagram. */
export type RecordState = 'in_progress' | 'completed' | 'failed' | 'unknown' | 'tombstone';

/**
 * How an operation runs. `atomic`: its effect commits with the record.
 * `leased`: its effect leaves the database; a retry or a recovery worker can
 * resume it from its stored input. `transparent`: a wrapped route that
 * retrysafe cannot re-run, so a lost lease makes its outcome unknown.
 */
export type OperationMode = 'atomic' | 'leased' | 'transparent';

interface RecordBase {
  readonly identity: OperationIdentity;
  readonly mode: OperationMode;
  readonly fingerprint: Fingerprint;
  /** The digest of the user who made the operation; undefined when the route named none (or the record predates per-user scoping). */
  readonly principal?: PrincipalDigest | undefined;
  readonly createdAt: Date;
  /** The store's clock when the record was read, for lease arithmetic. */
  readonly readAt: Date;
}

/** A leased operation that a worker is running. Atomic mode never commits this state. */
export interface InProgressRecord extends RecordBase {
  readonly state: 'in_progress';
  readonly leaseExpiresAt: Date;
  readonly attempt: number;
  /** Grows with every new owner; a take-over names the one it saw. */
  readonly fencingToken: number;
}

/** A completed operation whose answer is kept: `completed`, or `failed` with a known outcome and no effect. */
export interface CompletedRecord extends RecordBase {
  readonly state: 'completed' | 'failed';
  readonly response: Reply;
  /** The body was too large to keep: only its status and headers were stored. */
  readonly responseOmitted: boolean;
  readonly completedAt: Date;
  /** When the response may be pruned, by the store's clock: until then the record does not change. */
  readonly responseExpiresAt: Date;
}

/** A leased operation whose outcome could not be determined; it waits for an operator. */
export interface UnknownRecord extends RecordBase {
  readonly state: 'unknown';
  readonly reason: string;
}

/** A completed operation whose body was pruned; the status and the resource reference remain. */
export interface TombstoneRecord extends RecordBase {
  readonly state: 'tombstone';
  readonly status: number;
  readonly resource: string | undefined;
}

export type OperationRecord = InProgressRecord | CompletedRecord | UnknownRecord | TombstoneRecord;
