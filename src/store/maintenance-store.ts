import type { OperationIdentity } from '../core/identity.js';
import type { OperationMode, RecordState } from '../core/record.js';
import type { HeaderValue } from '../core/answer/reply.js';
import type { ActivityStore } from './activity-store.js';

/** What the gauges read on every scrape: cheap counts through the partial indexes. */
export interface StoreStats {
  /** Seconds since the oldest `in_progress` operation was claimed; undefined when there is none. */
  readonly oldestInProgressSeconds: number | undefined;
  /** Operations whose outcome could not be determined, waiting for an operator. */
  readonly unknownOperations: number;
  /** `in_progress` operations whose lease ran out: the recovery worker's backlog. */
  readonly expiredLeases: number;
  /** Webhook events given up on (parked), waiting for an operator to requeue them. */
  readonly parkedWebhookEvents: number;
}

/** A step of a leased operation, without its result. */
export interface StepSummary {
  readonly name: string;
  readonly startedAt: Date;
  /** Undefined while the step is started and unfinished: its call may have reached the outside world, its result is not checkpointed. */
  readonly finishedAt: Date | undefined;
  /** The owner's fencing token when the step was recorded. */
  readonly fencingToken: number;
}

/** Everything an operator may want to know about one operation record. */
export interface OperationDetails {
  readonly identity: OperationIdentity;
  readonly state: RecordState;
  readonly mode: OperationMode;
  readonly fingerprint: Uint8Array;
  readonly createdAt: Date;
  readonly finishedAt: Date | undefined;
  readonly attempt: number;
  readonly fencingToken: number;
  readonly leaseOwner: string | undefined;
  readonly leaseExpiresAt: Date | undefined;
  readonly status: number | undefined;
  /** A header sent on several lines is a list, in order. */
  readonly headers: Readonly<Record<string, HeaderValue>> | undefined;
  readonly resource: string | undefined;
  readonly reason: string | undefined;
  readonly responseOmitted: boolean;
  /** Size of the stored body in bytes; undefined once it was pruned or before the operation completed. */
  readonly bodyBytes: number | undefined;
  /** Only when asked for: bodies may hold personal data. */
  readonly body: Uint8Array | undefined;
  readonly responseExpiresAt: Date | undefined;
  readonly expiresAt: Date | undefined;
  readonly steps: readonly StepSummary[];
}

/**
 * An operation that needs attention: a lease nobody renews, an operation
 * waiting out its backoff after failed attempts, or an outcome nobody knows.
 */
export interface StuckOperation {
  readonly identity: OperationIdentity;
  readonly kind: 'expired-lease' | 'backing-off' | 'unknown';
  readonly mode: OperationMode;
  readonly attempt: number;
  readonly createdAt: Date;
  /** Seconds since the operation was first claimed. */
  readonly ageSeconds: number;
  readonly leaseExpiresAt: Date | undefined;
  readonly reason: string | undefined;
  /** Failed attempts that count toward giving up. */
  readonly failures: number;
  /** The end of the backoff: no attempt runs before it. */
  readonly nextAttemptAt: Date | undefined;
  /** The error of the last failed attempt. */
  readonly lastError: string | undefined;
}

export interface StuckQuery {
  /** Only operations claimed at least this many seconds ago. */
  readonly olderThanSeconds: number;
  /** Most rows of each kind. */
  readonly limit: number;
}

/** One batch of a sweep step. */
export interface SweepBatch {
  /** Rows the batch changed. */
  readonly changed: number;
  /**
   * Where in the sweep order the step's next batch of the same pass walks on
   * from, as the store wrote it; undefined when the batch found no row.
   */
  readonly resume: string | undefined;
}

/**
 * The statements of retention and operations, apart from the request path.
 * Every sweep step is one short statement over at most `limit` rows, so it
 * never holds locks for long; unfinished operations are never swept.
 */
export interface MaintenanceStore extends Pick<ActivityStore, 'pruneActivity'> {
  /** Turns up to `limit` completed records whose response expired into tombstones, walking on from `from` (a previous batch's `resume`). */
  tombstoneExpired(limit: number, from?: string): Promise<SweepBatch>;
  /** Deletes up to `limit` tombstones that expired, walking on from `from` (a previous batch's `resume`). */
  deleteExpiredTombstones(limit: number, from?: string): Promise<SweepBatch>;
  stats(): Promise<StoreStats>;
  /**
   * One record in full, its body only when asked for.
   * @deprecated The operator seam reads more of it (failures, last error,
   * downstream keys, operator actions): `OperatorStore.operation` (of
   * `postgresOperatorTools(database).operators`, or `operatorStore(database)`
   * from `retrysafe/console`). On PostgreSQL both draw on the same read.
   */
  inspect(identity: OperationIdentity, options?: { readonly body?: boolean }): Promise<OperationDetails | undefined>;
  /** Expired leases, operations backing off and unknown outcomes, oldest first. */
  stuck(query: StuckQuery): Promise<readonly StuckOperation[]>;
  /** Expired leases of leased operations not among `handled`, counted by operation name: what a recovery worker with only those handlers skips. */
  unhandledLeases(handled: readonly string[]): Promise<Readonly<Record<string, number>>>;
}
