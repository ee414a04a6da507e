import type { Clock } from '../core/clock.js';
import type { Completion } from '../core/completion.js';
import type { Fingerprint } from '../core/fingerprint.js';
import type { OperationIdentity } from '../core/identity.js';
import type { PrincipalDigest } from '../core/principal.js';
import type { OperationRecord } from '../core/record.js';

export interface ClaimRequest {
  readonly identity: OperationIdentity;
  readonly fingerprint: Fingerprint;
  /** Stored with the record: the digest of the route's principal, when it names one. */
  readonly principal?: PrincipalDigest | undefined;
  /** How long a duplicate waits for a running first attempt before giving up; the claim alone, not the handler. */
  readonly lockTimeoutMs: number;
  /** Times the lock wait. Default `systemClock`. */
  readonly clock?: Clock;
  /** The server-side bound (`statement_timeout`) on every later statement of the transaction, unless the session's is tighter. Unset: the session's. */
  readonly statementTimeoutMs?: number;
}

/** The result of claiming an identity inside a transaction. */
export type AtomicClaim =
  /** No record holds the identity, and this transaction holds it until it ends: a concurrent duplicate waits. */
  | { readonly kind: 'claimed' }
  /**
   * A record holds the identity. `waited`: it was written by a transaction
   * still running when the claim began, so the claim waited for it (a lock
   * wait, not a plain replay).
   */
  | { readonly kind: 'existing'; readonly record: OperationRecord; readonly waited: boolean }
  /** Another transaction holds the identity and did not finish within the lock wait. */
  | { readonly kind: 'busy' };

/** One transaction that starts with a claim; see `OperationStore.atomic`. */
export interface AtomicTransaction<Tx> {
  readonly claim: AtomicClaim;
  /** The application's own transaction handle, for the handler's writes. */
  readonly tx: Tx;
}

/**
 * What `work` decides: commit its writes with the completion to store (the
 * record is written once, completed, as the transaction commits: with the
 * COMMIT, where the driver pipelines), or roll everything back.
 */
export type Settlement<T> =
  | { readonly commit: true; readonly value: T; readonly completion: Completion }
  | { readonly commit: false; readonly value: T };

/**
 * Atomic mode's seam: the claim, the handler's writes and the completion in
 * one transaction of the application's database, and a plain transaction for
 * requests that carry no key.
 */
export interface AtomicStore<Tx> {
  /**
   * Opens one transaction, claims the identity in it, and runs `work`. The
   * transaction commits only when `work` settles with `commit: true`, writing
   * the record of its `completion` with it. When a record written meanwhile by a writer that did
   * not wait for the claim (leased mode on the same identity, or any other)
   * holds the identity at that point, everything rolls back and the answer is
   * `taken(record)`.
   */
  atomic<T>(
    request: ClaimRequest,
    work: (transaction: AtomicTransaction<Tx>) => Promise<Settlement<T>>,
    taken: (record: OperationRecord) => T,
  ): Promise<T>;
  /** Runs `work` in a plain transaction, for requests that carry no key. */
  transaction<T>(work: (tx: Tx) => Promise<T>): Promise<T>;
  /** The data layer's own limit on a transaction's life (`SqlDatabase.transactionTimeoutMs`); a decorator passes it on. */
  readonly transactionTimeoutMs?: number | undefined;
}
