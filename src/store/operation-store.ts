import type { Fingerprint } from '../core/fingerprint.js';
import type { OperationIdentity } from '../core/identity.js';
import type { OperationRecord } from '../core/record.js';
import type { Reply } from '../core/reply.js';

/** How long a finished operation keeps its response, then its tombstone. */
export interface Retention {
  /** Seconds the response body is kept and replayed. Default 24 hours. */
  readonly responseSeconds: number;
  /** Seconds the tombstone (identity, fingerprint, status, resource) is kept. Default 30 days. */
  readonly tombstoneSeconds: number;
}

export const defaultRetention: Retention = { responseSeconds: 24 * 3600, tombstoneSeconds: 30 * 24 * 3600 };

export interface ClaimRequest {
  readonly identity: OperationIdentity;
  readonly fingerprint: Fingerprint;
  /** How long a duplicate waits for a running first attempt before giving up. */
  readonly lockTimeoutMs: number;
}

/** The result of claiming an identity inside a transaction. */
export type AtomicClaim =
  | { readonly kind: 'claimed' }
  | { readonly kind: 'existing'; readonly record: OperationRecord }
  /** Another transaction holds the identity and did not finish within the lock wait. */
  | { readonly kind: 'busy' };

export interface Completion {
  readonly state: 'completed' | 'failed';
  /** The stored part of the reply: status, allowed headers and body bytes. */
  readonly reply: Reply;
  readonly retention: Retention;
}

/** One transaction that starts with a claim; see `OperationStore.atomic`. */
export interface AtomicTransaction<Tx> {
  readonly claim: AtomicClaim;
  /** The application's own transaction handle, for the handler's writes. */
  readonly tx: Tx;
  /** Writes the outcome into the claimed record, in this transaction. */
  complete(this: void, completion: Completion): Promise<void>;
}

/** What `work` decides: commit its writes, or roll everything back. */
export interface Settlement<T> {
  readonly commit: boolean;
  readonly value: T;
}

/**
 * The seam between the core and a database. A store throws only
 * `RetrysafeError('store-unavailable')` for its own failures; errors thrown by
 * `work` pass through unchanged after the transaction is rolled back.
 */
export interface OperationStore<Tx> {
  /**
   * Opens one transaction, claims the identity in it, and runs `work`. The
   * transaction commits only when `work` settles with `commit: true`, so an
   * `in_progress` record is never committed.
   */
  atomic<T>(request: ClaimRequest, work: (transaction: AtomicTransaction<Tx>) => Promise<Settlement<T>>): Promise<T>;
  /** Runs `work` in a plain transaction, for requests that carry no key. */
  transaction<T>(work: (tx: Tx) => Promise<T>): Promise<T>;
}
