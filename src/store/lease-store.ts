import type { Completion } from '../core/completion.js';
import type { Fingerprint } from '../core/fingerprint.js';
import type { OperationIdentity } from '../core/identity.js';
import type { PrincipalDigest } from '../core/principal.js';
import type { OperationMode, OperationRecord } from '../core/record.js';

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
  /** How long the lease lasts from each write that renews it: the length it was taken with. */
  readonly leaseSeconds: number;
}

/** A failed attempt, as the record keeps it for an operator. */
export interface Failure {
  /** Whether the failure counts toward giving up (the downstream did not confirm that it had no effect). */
  readonly counted: boolean;
  /** Its error, at most 1000 characters (`errorChain`: its causes, without credentials): the record's last error from then on. */
  readonly error: string;
}

/** How a failed attempt hands the operation on. */
export interface Release extends Failure {
  /** No take-over before this many seconds from now: the backoff. */
  readonly delaySeconds: number;
}

export interface LeaseRequest {
  readonly identity: OperationIdentity;
  readonly fingerprint: Fingerprint;
  /** Stored with the record: the digest of the route's principal, when it names one. */
  readonly principal?: PrincipalDigest | undefined;
  readonly input: unknown;
  readonly mode: Exclude<OperationMode, 'atomic'>;
  readonly ownerToken: string;
  readonly leaseSeconds: number;
}

export type LeaseClaim =
  { readonly kind: 'claimed'; readonly lease: Lease } | { readonly kind: 'existing'; readonly record: OperationRecord };

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

/** The claims of leased and transparent requests, and the recovery worker's take-over. */
export interface LeaseClaims {
  /** Commits an `in_progress` record with a new lease, or returns the record that holds the identity. */
  claimLease(request: LeaseRequest): Promise<LeaseClaim>;
  /** Takes an expired lease by compare-and-swap on the fencing token seen; undefined when another worker won. */
  takeOver(
    identity: OperationIdentity,
    seenFencingToken: number,
    ownerToken: string,
    leaseSeconds: number,
  ): Promise<Lease | undefined>;
}

/** The lease keeper's renewals while a handler runs. */
export interface LeaseRenewal {
  /** Extends the lease by its `leaseSeconds`. */
  renew(lease: Lease): Promise<boolean>;
}

/**
 * What a run under a held lease writes (`runWithLease`, transparent mode):
 * its steps and how it ends. Every write is conditional on the lease.
 */
export interface LeasedWrites<Tx> {
  /** Records, before its downstream call, that a step is starting, and renews the lease; false when the lease is lost or the step finished. */
  startStep(lease: Lease, step: string): Promise<boolean>;
  /** Stores a step's result as a recovery point, and renews the lease. */
  checkpoint(lease: Lease, step: string, result: unknown): Promise<boolean>;
  /** Runs local writes and the step's recovery point in one transaction, only while the lease is held. */
  checkpointWith<T>(lease: Lease, step: string, work: (tx: Tx) => Promise<T>): Promise<Owned<T>>;
  /** The steps started or finished so far by any attempt, by step name, with the recovery points of the finished ones. */
  steps(lease: Lease): Promise<ReadonlyMap<string, StepProgress>>;
  /** Writes the completion and ends the lease, only while the lease is held. */
  completeLease(lease: Lease, completion: Completion): Promise<boolean>;
  /** Deletes the record: nothing of the operation reached the outside world, so a retry may start afresh. */
  abandon(lease: Lease): Promise<boolean>;
  /** Ends the lease after a failed attempt: a retry or a recovery worker may resume it once the backoff has passed. */
  release(lease: Lease, release: Release): Promise<boolean>;
  /** Gives the operation up as `unknown`; `failure`, when a failed attempt is why, is counted and kept as its last error. */
  markUnknown(lease: Lease, reason: string, failure?: Failure): Promise<boolean>;
}

/** The recovery worker's listing. */
export interface ExpiredLeases {
  /** Expired leases past their backoff, oldest first; with `operations`, only theirs and transparent ones. */
  expiredLeases(limit: number, operations?: readonly string[]): Promise<readonly ExpiredLease[]>;
}

/**
 * Leased mode's statements, as one store implements them; each caller asks
 * for the part it uses. Every write by a worker is conditional on its owner
 * and fencing tokens and answers `false` when they no longer match: the
 * worker lost its lease and changed nothing.
 */
export interface LeaseStore<Tx> extends LeaseClaims, LeaseRenewal, LeasedWrites<Tx>, ExpiredLeases {}
