import type { HeaderValue } from '../core/answer/reply.js';
import type { Completion } from '../core/completion.js';
import type { OperationIdentity } from '../core/identity.js';
import type { OperationMode, RecordState } from '../core/record.js';
import type { ActivityKind } from './activity-store.js';

/**
 * What an operator saw of a record when deciding: an action is refused when
 * the record no longer matches (a page drawn before the operation ran again).
 * Every take-over raises the fencing token, and every action changes the state.
 */
export interface RecordVersion {
  readonly state: RecordState;
  readonly fencingToken: number;
}

/** One operation in a list: enough to choose which to open. */
export interface OperationSummary {
  readonly identity: OperationIdentity;
  readonly state: RecordState;
  readonly mode: OperationMode;
  readonly attempt: number;
  readonly fencingToken: number;
  readonly createdAt: Date;
  readonly finishedAt: Date | undefined;
  readonly leaseExpiresAt: Date | undefined;
  readonly status: number | undefined;
  readonly reason: string | undefined;
}

/** How a key is matched: the whole key, or its beginning. */
export type KeyMatch =
  { readonly match: 'exact'; readonly key: string } | { readonly match: 'prefix'; readonly prefix: string };

/**
 * A page of operations. Each filter narrows the walk of an index that exists:
 * `unknown` walks the index of reasoned records by claim time, `in_progress`
 * the lease index by lease expiry, anything else the primary key (a key
 * without an operation skips from one tenant and operation to the next).
 */
export interface OperationQuery {
  readonly state?: RecordState;
  readonly tenant?: string;
  /** Only with `tenant`, or with a key. */
  readonly operation?: string;
  readonly key?: KeyMatch;
  /** Only operations claimed at least this many seconds ago. */
  readonly olderThanSeconds?: number;
  readonly limit: number;
  /** The `next` of the page before. */
  readonly after?: string;
}

/** Items in order, and the cursor of the next page when there may be one. */
export interface Page<T> {
  readonly items: readonly T[];
  readonly next: string | undefined;
}

/** A step of a leased operation as an operator sees it; its result is left out. */
export interface StepView {
  readonly name: string;
  readonly startedAt: Date;
  /** Undefined while started only: its downstream call may have reached the outside world. */
  readonly finishedAt: Date | undefined;
  readonly fencingToken: number;
  /** The key every attempt sends downstream for this step: look it up in the provider's records. */
  readonly downstreamKey: string;
}

/** What an operator did, recorded durably with who and why. */
export interface OperatorActionRecord {
  readonly at: Date;
  readonly actor: string;
  readonly action: OperatorActionName;
  readonly reason: string;
  readonly seen: Readonly<Record<string, unknown>>;
  readonly detail: Readonly<Record<string, unknown>>;
}

export type OperatorActionName = 'resolve' | 'retry' | 'purge' | 'requeue';

/** One operation in full, as the console's page and the typed API show it. */
export interface OperationView extends OperationSummary {
  readonly version: RecordVersion;
  /** The first 12 hexadecimal characters of the fingerprint. */
  readonly fingerprint: string;
  readonly leaseOwner: string | undefined;
  /** The end of the backoff after a failed attempt: no attempt runs before it. */
  readonly notBefore: Date | undefined;
  /** Failed attempts that count toward giving up, the one that gave up included. */
  readonly failures: number;
  /** The error of the last failed attempt (at most 1000 characters); undefined before any failed. */
  readonly lastError: string | undefined;
  readonly retriedAt: Date | undefined;
  /** A header sent on several lines is a list, in order. */
  readonly headers: Readonly<Record<string, HeaderValue>> | undefined;
  readonly resource: string | undefined;
  readonly responseOmitted: boolean;
  /** Size of the stored body in bytes; undefined once pruned (a tombstone) or before the operation finished. */
  readonly bodyBytes: number | undefined;
  /** Only when asked for: bodies may hold personal data. */
  readonly body: Uint8Array | undefined;
  /** Whether the record keeps its validated input, so that recovery can run it again. */
  readonly resumable: boolean;
  readonly responseExpiresAt: Date | undefined;
  readonly expiresAt: Date | undefined;
  readonly steps: readonly StepView[];
  readonly actions: readonly OperatorActionRecord[];
}

/**
 * What happened in one hour, summed over the operations: the counts every
 * process added to the activity table (migration 0013), not a count of records.
 */
export interface ActivityBucket {
  readonly start: Date;
  /** How many new operations, replays, mismatches, conflicts and unknown outcomes. */
  readonly counts: Readonly<Record<ActivityKind, number>>;
}

/** A dead letter of the outbox, without its payload. */
export interface DeadLetterSummary {
  readonly id: string;
  readonly topic: string;
  readonly attempts: number;
  readonly lastError: string | undefined;
  readonly createdAt: Date;
  readonly parkedAt: Date;
  /** When it was parked, to the microsecond: what a requeue must still find. */
  readonly version: string;
}

/** A received webhook event that was parked after failing too often. */
export interface ParkedEvent {
  readonly receiver: string;
  readonly id: string;
  readonly attempts: number;
  readonly lastError: string | undefined;
  readonly receivedAt: Date;
  /** When it was parked, to the microsecond ('' when parked before migration 11): what a requeue must still find. */
  readonly version: string;
}

/** A received webhook event, named by its receiver and the sender's `webhook-id`. */
export interface WebhookEventId {
  readonly receiver: string;
  readonly id: string;
}

/** Who acts and why: recorded with the action. */
export interface Actor {
  readonly actor: string;
  readonly reason: string;
}

/** What an operator action records once it has changed a record. */
export interface ActionEntry extends Actor {
  readonly action: OperatorActionName;
  readonly subject: { readonly identity: OperationIdentity } | { readonly messageId: string };
  readonly seen: Readonly<Record<string, unknown>>;
  readonly detail?: Readonly<Record<string, unknown>>;
}

/**
 * An operator's actions on an `unknown` operation (`retryOperation`,
 * `resolveOperation`); no request makes them. They write the record as the
 * application's own store does, so the application's store serves them
 * (`OperationStore`): its decorators then apply to them too (the encrypting
 * store seals a resolved body, the store budget bounds them).
 */
export interface UnknownActions {
  /**
   * Puts an `unknown` leased operation back into recovery, its lease expired
   * at once and its failures and give-up horizon started again; false when it
   * is not unknown or cannot be re-run (transparent mode, or no input kept).
   * With `fencingToken`, also false when the record's is another: the
   * operator decided on a record that has run again since.
   */
  retryUnknown(
    identity: OperationIdentity,
    ownerToken: string,
    reason: string,
    fencingToken?: number,
  ): Promise<boolean>;
  /** An operator's decision on an `unknown` operation; false when it is not unknown (or, given `fencingToken`, has another). */
  resolveUnknown(
    identity: OperationIdentity,
    completion: Completion,
    reason: string,
    fencingToken?: number,
  ): Promise<boolean>;
}

/**
 * The operators' seam: reads that page on indexes that exist, and the actions
 * no request makes. Every action is conditional on what the operator saw and
 * answers false, changing nothing, when the record changed since.
 */
export interface OperatorStore {
  list(query: OperationQuery): Promise<Page<OperationSummary>>;
  operation(identity: OperationIdentity, options?: { readonly body?: boolean }): Promise<OperationView | undefined>;
  /**
   * A success status (2xx) the operation has stored for another key of the
   * tenant: what resolving one of its unknown outcomes most likely answers.
   * Undefined when none is stored.
   */
  successStatus(identity: Pick<OperationIdentity, 'tenant' | 'operation'>): Promise<number | undefined>;
  /** The activity of each of the last `hours` hours, the current one included, oldest first; hours without any are left out. */
  activity(hours: number): Promise<readonly ActivityBucket[]>;
  /**
   * Seconds since the oldest operation without an outcome was claimed: in
   * progress in any mode, or unknown; undefined when there is none. (The
   * store's gauge of the oldest `in_progress` operation leaves unknown
   * outcomes out.)
   */
  oldestUnfinished(): Promise<number | undefined>;
  deadLetters(query: { readonly limit: number; readonly after?: string }): Promise<Page<DeadLetterSummary>>;
  parkedEvents(query: { readonly limit: number; readonly after?: string }): Promise<Page<ParkedEvent>>;
  /** Deletes the record and its steps, and records who did it, in one statement. */
  purge(identity: OperationIdentity, seen: RecordVersion, by: Actor): Promise<boolean>;
  /** Puts a dead letter back in line with a fresh count of attempts, if it is still parked as `seenVersion` says, and records who did it. */
  requeue(id: string, seenVersion: string, by: Actor): Promise<boolean>;
  /** Records an action done through the application's store (`UnknownActions`: resolve, retry). */
  record(entry: ActionEntry): Promise<void>;
  /** Processes a parked webhook event again with a fresh count of attempts, if it is still parked as `seenVersion` says, and records who did it. */
  requeueEvent(event: WebhookEventId, seenVersion: string, by: Actor): Promise<boolean>;
}
