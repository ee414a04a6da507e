import type { Fingerprint } from '../core/fingerprint.js';
import type { OperationIdentity } from '../core/identity.js';
import type { OperationMode, OperationRecord } from '../core/record.js';
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
  /** How long a duplicate waits for a running first attempt before giving up; the claim alone, not the handler. */
  readonly lockTimeoutMs: number;
  /** The server-side bound (`statement_timeout`) on every later statement of the transaction. Unset: the session's. */
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

export interface Completion {
  readonly state: 'completed' | 'failed';
  /** The stored part of the reply: status, allowed headers and body bytes. */
  readonly reply: Reply;
  readonly retention: Retention;
  /** The body was too large to keep; `reply.body` is then empty. */
  readonly omitted?: boolean;
}

/** One transaction that starts with a claim; see `OperationStore.atomic`. */
export interface AtomicTransaction<Tx> {
  readonly claim: AtomicClaim;
  /** The application's own transaction handle, for the handler's writes. */
  readonly tx: Tx;
  /**
   * The outcome to store: the record is written once, finished, as the
   * transaction commits (with the COMMIT, where the driver pipelines).
   */
  complete(this: void, completion: Completion): Promise<void>;
}

/** What `work` decides: commit its writes, or roll everything back. */
export interface Settlement<T> {
  readonly commit: boolean;
  readonly value: T;
}

/** A worker's hold on a leased operation: every write it makes names the owner and fencing tokens. */
export interface Lease {
  readonly identity: OperationIdentity;
  readonly ownerToken: string;
  /** Grows with every new owner; handed to downstream calls so they can refuse a stale owner too. */
  readonly fencingToken: number;
  /** 1 for the first owner, then one more for every take-over. */
  readonly attempt: number;
  /** The validated input the operation was claimed with. */
  readonly input: unknown;
  /** Failed attempts so far that count toward giving up. */
  readonly failures: number;
  /** Seconds since the claim, or since an operator put the operation back into recovery, by the store's clock. */
  readonly ageSeconds: number;
}

/** How a failed attempt hands the operation on. */
export interface Release {
  /** No take-over before this many seconds from now: the backoff. */
  readonly delaySeconds: number;
  /** Whether the failure counts toward giving up (the downstream did not confirm that it had no effect). */
  readonly counted: boolean;
}

export interface LeaseRequest {
  readonly identity: OperationIdentity;
  readonly fingerprint: Fingerprint;
  readonly input: unknown;
  readonly mode: Exclude<OperationMode, 'atomic'>;
  readonly ownerToken: string;
  readonly leaseSeconds: number;
}

export type LeaseClaim =
  | { readonly kind: 'claimed'; readonly lease: Lease }
  | { readonly kind: 'existing'; readonly record: OperationRecord };

/** An operation whose owner stopped renewing; a recovery worker may take it over. */
export interface ExpiredLease {
  readonly identity: OperationIdentity;
  readonly fencingToken: number;
  readonly mode: OperationMode;
}

/** How far a step got: `started` means its downstream call may have reached the outside world. */
export type StepProgress = { readonly state: 'started' } | { readonly state: 'finished'; readonly result: unknown };

/** What a fenced local step returns: its value, or that the lease was lost and nothing was written. */
export type Owned<T> = { readonly owned: true; readonly value: T } | { readonly owned: false };

/**
 * Leased mode's statements. Every write by a worker is conditional on its
 * owner and fencing tokens and answers `false` when they no longer match: the
 * worker lost its lease and changed nothing.
 */
export interface LeaseStore<Tx> {
  /** Commits an `in_progress` record with a new lease, or returns the record that holds the identity. */
  claimLease(request: LeaseRequest): Promise<LeaseClaim>;
  /** Takes an expired lease by compare-and-swap on the fencing token seen; undefined when another worker won. */
  takeOver(identity: OperationIdentity, seenFencingToken: number, ownerToken: string, leaseSeconds: number): Promise<Lease | undefined>;
  renew(lease: Lease, leaseSeconds: number): Promise<boolean>;
  /** Records, before its downstream call, that a step is starting, and renews the lease; false when the lease is lost or the step finished. */
  startStep(lease: Lease, step: string, leaseSeconds: number): Promise<boolean>;
  /** Stores a step's result as a recovery point, and renews the lease. */
  checkpoint(lease: Lease, step: string, result: unknown, leaseSeconds: number): Promise<boolean>;
  /** Runs local writes and the step's recovery point in one transaction, only while the lease is held. */
  checkpointWith<T>(lease: Lease, step: string, leaseSeconds: number, work: (tx: Tx) => Promise<T>): Promise<Owned<T>>;
  /** The steps started or finished so far by any attempt, by step name, with the recovery points of the finished ones. */
  steps(lease: Lease): Promise<ReadonlyMap<string, StepProgress>>;
  finish(lease: Lease, completion: Completion): Promise<boolean>;
  /** Deletes the record: nothing of the operation reached the outside world, so a retry may start afresh. */
  abandon(lease: Lease): Promise<boolean>;
  /** Ends the lease after a failed attempt: a retry or a recovery worker may resume it once the backoff has passed. */
  release(lease: Lease, release: Release): Promise<boolean>;
  markUnknown(lease: Lease, reason: string): Promise<boolean>;
  /** Expired leases past their backoff, oldest first; with `operations`, only theirs and transparent ones. */
  expiredLeases(limit: number, operations?: readonly string[]): Promise<readonly ExpiredLease[]>;
  /**
   * Puts an `unknown` leased operation back into recovery, its lease expired
   * at once and its failures and give-up horizon started again; false when it
   * is not unknown or cannot be re-run (transparent mode, or no input kept).
   */
  retryUnknown(identity: OperationIdentity, ownerToken: string, reason: string): Promise<boolean>;
  /** An operator's decision on an `unknown` operation; false when it is not unknown. */
  resolveUnknown(identity: OperationIdentity, completion: Completion, reason: string): Promise<boolean>;
  read(identity: OperationIdentity): Promise<OperationRecord | undefined>;
}

/**
 * The seam between the core and a database. A store throws only
 * `RetrysafeError('store-unavailable')` for its own failures; errors thrown by
 * `work` pass through unchanged after the transaction is rolled back.
 */
export interface OperationStore<Tx> extends LeaseStore<Tx> {
  /**
   * Opens one transaction, claims the identity in it, and runs `work`. The
   * transaction commits only when `work` settles with `commit: true`, writing
   * the record with it. When a record written meanwhile by a writer that did
   * not wait for the claim (leased mode on the same identity, or any other)
   * holds the identity at that point, everything rolls back and the answer is
   * `taken(record)`.
   */
  atomic<T>(request: ClaimRequest, work: (transaction: AtomicTransaction<Tx>) => Promise<Settlement<T>>, taken: (record: OperationRecord) => T): Promise<T>;
  /** Runs `work` in a plain transaction, for requests that carry no key. */
  transaction<T>(work: (tx: Tx) => Promise<T>): Promise<T>;
  /** The data layer's own limit on a transaction's life (`SqlDatabase.transactionTimeoutMs`); a decorator passes it on. */
  readonly transactionTimeoutMs?: number | undefined;
}
