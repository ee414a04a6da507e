import type { BackoffOptions } from '../client/backoff.js';
import { defaultRetryDelay } from './retry-delay.js';
import { publishDiagnostics } from '../core/diagnostics.js';
import { RetrysafeError } from '../core/errors.js';
import { notify, type Observer, type RetrysafeEvent } from '../core/events.js';
import { warnRawBodyMissing } from '../core/process-warning.js';
import { defaultKeyLimits, type KeyLimits } from '../core/key.js';
import { type StoragePolicy, resolvePolicy } from '../core/storage-policy.js';
import { type ReadBeforeClaim, type ReadFirst, readFirstPolicy } from './read-first.js';
import { defaultProblemBase } from '../core/answer/problems.js';
import type { OperationStore } from '../store/operation-store.js';
import { defaultRetention, type Retention } from '../core/retention.js';
import { NAME_MAX_BYTES, type OperationIdentity } from '../core/identity.js';
import type { CompletedRecord } from '../core/record.js';
import {
  assertDescribedBy,
  checkRetention,
  lockTimeoutRule,
  resolveRetention,
  type RetentionSetting,
} from '../core/route-settings.js';
import {
  byteSize,
  checkOptions,
  count,
  milliseconds,
  type OptionRules,
  seconds,
  STORED_MAX_SECONDS,
  TIMER_MAX_SECONDS,
  wholeSeconds,
} from '../core/option-rules.js';
import type { Tracing } from '../core/tracing.js';
import { tracedStore } from '../store/traced-store.js';
import { defaultStoreTimeoutMs } from '../store/store-clock.js';
import { type Clock, systemClock } from '../core/clock.js';
import { replayCached, type ReplayCacheOptions } from '../store/replay-cache.js';
import { extend } from '../core/extend.js';
import { type ActivityOptions, ActivityRecorder } from '../background/activity-recorder.js';
import { budgeted, budgetedStore } from '../store/budgeted-store.js';
import { type SpecificationRegistry, specificationRegistry } from './published-specification.js';

export interface IdempotencyOptions<Tx> {
  readonly store: OperationStore<Tx>;
  /**
   * How long a duplicate of a running atomic attempt waits for it, then
   * replays its answer; past it, 409 with Retry-After. 0 answers 409 at once.
   * It holds no database connection while it waits. A route may set its own.
   * Default 3000 ms.
   */
  readonly lockTimeoutMs?: number;
  /** How long each store phase may take before the request gets 503. Default 5000 ms. */
  readonly storeTimeoutMs?: number;
  /**
   * Atomic mode: the server-side bound on every statement after the claim in
   * its transaction, the handler's included (a transaction-local
   * `statement_timeout`). It never raises a tighter `statement_timeout` the
   * session starts with (set on the role or the connection): the smaller of
   * the two applies, 0 counting as no limit. A handler statement cut by
   * either answers 503 `statement-timeout`. Default 30000 ms.
   */
  readonly statementTimeoutMs?: number;
  /** Seconds for `Retry-After` on 503 and on a lock wait that ran out. Default 1. */
  readonly retryAfterSeconds?: number;
  /** Leased mode: how long a lease lasts without renewal. Default 30 s; renewed every third of it. */
  readonly leaseSeconds?: number;
  /**
   * Leased mode: failed attempts after which an operation that may have
   * reached the outside world becomes `unknown`. A failure the downstream
   * confirms had no effect (the step's `reconcile` finds nothing) does not
   * count. Default 12: with the default backoff, at least 9 minutes of failures.
   */
  readonly maxAttempts?: number;
  /**
   * Leased mode: the rest after a failed attempt, `baseDelayMs × 2^(attempt-1)`
   * at most `maxDelayMs`, of which a random half. Default 1 s and 5 minutes.
   */
  readonly retryDelay?: Partial<BackoffOptions>;
  /**
   * Leased mode: seconds from the claim after which a failed attempt makes the
   * operation `unknown` whatever the count of failures. Default 3600.
   */
  readonly giveUpAfterSeconds?: number;
  readonly policy?: Partial<StoragePolicy>;
  /** Bounds on an accepted key, in bytes; within 1 to 255, what the key column holds. Default 1 to 255. */
  readonly keyLimits?: Partial<KeyLimits>;
  /** Deepest nesting of arrays and objects accepted in a request body, checked before anything reads it. Default 64. */
  readonly maxInputDepth?: number;
  /** How long answers and tombstones are kept; a function decides per operation (by tenant, say). Routes may set their own. */
  readonly retention?: RetentionSetting;
  /**
   * The URL of the documented idempotency policy, for `Link: rel="describedby"` on retrysafe's 400, 409 and 422
   * answers; routes may set their own. Default: `specificationPath` when there is one.
   */
  readonly describedBy?: string;
  /**
   * Where the adapters' `specification()` serves the idempotency specification generated from the routes' own
   * settings: an HTML page at this path, an OpenAPI 3.1 document at `<path>/openapi.json`. Default: not served.
   */
  readonly specificationPath?: string;
  /** Base URI of problem `type`s. Default `https://retrysafe.dev/problems/`. */
  readonly problemBase?: string;
  /** Receive every event, for metrics and logs (see `retrysafe/observe`). */
  readonly observers?: readonly Observer[];
  /**
   * Atomic mode: answer completed operations from one read before the
   * transaction. Default `auto`: when about a quarter of an operation's keyed
   * requests are replays (see `read-first.ts`).
   */
  readonly readBeforeClaim?: ReadBeforeClaim;
  /**
   * Traces every attempt, store call, lock wait and step, for example
   * `openTelemetryTracing()` of `retrysafe/otel`. Default: none.
   */
  readonly tracing?: Tracing;
  /**
   * Keep finished records in this process, so a replay costs no round trip
   * (`true` for the default bounds; see `replayCached`). Default: off, as a
   * record deleted by hand would still be replayed for up to `maxAgeSeconds`.
   */
  readonly replayCache?: boolean | ReplayCacheOptions;
  /**
   * The console's hourly counts of new operations, replays, mismatches,
   * conflicts, unknown outcomes and failed attempts: counted in this process and added to the
   * store's activity table every `flushIntervalMs` (default 10 s) in one
   * statement, never on the request path; a crash loses at most one interval.
   * On by default when the store keeps them (`postgresStore`); `false` turns
   * it off. Call `close()` on shutdown to add the last counts.
   */
  readonly activity?: false | ActivityOptions;
  /**
   * The process's time for what it times itself: lease renewal, store
   * budgets, the replay cache's expiry, activity flushes. Lease expiry and
   * retention stay on the database's clock. Default `systemClock`; tests pass
   * `manualClock()` from `retrysafe/testing`.
   */
  readonly clock?: Clock;
}

/** The range of each numeric option; a store phase, a statement and a lease renewal each arm a timer. */
export const idempotencyRules = {
  lockTimeoutMs: lockTimeoutRule,
  storeTimeoutMs: milliseconds(1),
  statementTimeoutMs: milliseconds(1),
  retryAfterSeconds: wholeSeconds(1, TIMER_MAX_SECONDS),
  // Renewed every third of it, by a timer.
  leaseSeconds: seconds(0.003, TIMER_MAX_SECONDS),
  maxAttempts: count(1, 1000),
  giveUpAfterSeconds: seconds(0.001, STORED_MAX_SECONDS),
  maxInputDepth: count(1, 1000),
} as const satisfies OptionRules<IdempotencyOptions<unknown>>;

/** The leased mode's rest after a failed attempt, a timer. */
export const retryDelayRules = {
  baseDelayMs: milliseconds(1),
  maxDelayMs: milliseconds(1),
} as const satisfies OptionRules<BackoffOptions>;

/** The key column holds 1 to 255 bytes. */
export const keyLimitRules = {
  minBytes: byteSize(1, NAME_MAX_BYTES),
  maxBytes: byteSize(1, NAME_MAX_BYTES),
} as const satisfies OptionRules<KeyLimits>;

/** A stored body sits in one bytea value, which holds at most 1 GiB. */
export const policyRules = { maxStoredBodyBytes: byteSize(0, 2 ** 30) } as const satisfies OptionRules<StoragePolicy>;

/**
 * The configuration a store and its routes share, with every default applied.
 * `S` is the part of the store a caller uses: a mode asks only for its seam.
 */
export interface Idempotency<Tx, S = OperationStore<Tx>> {
  readonly store: S;
  readonly lockTimeoutMs: number;
  readonly storeTimeoutMs: number;
  readonly statementTimeoutMs: number;
  readonly retryAfterSeconds: number;
  readonly leaseSeconds: number;
  readonly maxAttempts: number;
  readonly retryDelay: BackoffOptions;
  readonly giveUpAfterSeconds: number;
  readonly policy: StoragePolicy;
  readonly keyLimits: KeyLimits;
  readonly maxInputDepth: number;
  /** The fixed part of the retention: the defaults and what the configuration set without a function. */
  readonly retention: Retention;
  /** The retention of one operation. */
  retentionFor(this: void, identity: OperationIdentity): Retention;
  /** See `IdempotencyOptions.describedBy`; the route's when it has one. */
  readonly describedBy: string | undefined;
  /** The routes defined with this configuration, published as its idempotency specification. */
  readonly specification: SpecificationRegistry;
  readonly problemBase: string;
  /** The tracer, when the application gave one. */
  readonly tracing: Tracing | undefined;
  readonly clock: Clock;
  /** The finished record the replay cache keeps for `identity`, if any: answered without the store. */
  recall(this: void, identity: OperationIdentity): CompletedRecord | undefined;
  /** Whether an atomic route reads before it claims, for this operation now. */
  readFirst(this: void, operation: string): ReadFirst;
  /** Announces an event to the observers. */
  emit(this: void, event: RetrysafeEvent): void;
  /**
   * Adds the activity counted so far to the store and stops its timer: call
   * it on a clean shutdown. Counting goes on if requests still come, and a
   * later call adds those too. Never rejects: a failed flush goes to
   * `activity.onError`.
   */
  close(this: void): Promise<void>;
}

export function idempotency<Tx>(options: IdempotencyOptions<Tx>): Idempotency<Tx> {
  assertDescribedBy(options.describedBy);
  checkOptions(idempotencyRules, options);
  checkOptions(retryDelayRules, options.retryDelay, 'retryDelay.');
  checkOptions(keyLimitRules, options.keyLimits, 'keyLimits.');
  checkOptions(policyRules, options.policy, 'policy.');
  const observers = [...(options.observers ?? []), publishDiagnostics, warnRawBodyMissing];
  const { tracing, clock = systemClock } = options;
  const lockTimeoutMs = options.lockTimeoutMs ?? 3000;
  const storeTimeoutMs = options.storeTimeoutMs ?? defaultStoreTimeoutMs;
  fitsTransactionLimit(options.store.transactionTimeoutMs, lockTimeoutMs, storeTimeoutMs);
  const { replayCache = false } = options;
  const cache =
    replayCache === false ? undefined : replayCached(options.store, replayCache === true ? {} : replayCache, clock);
  const store = cache?.store ?? options.store;
  const specification = specificationRegistry(options.specificationPath, typeof options.retention === 'function');
  const { activityCounts } = options.store;
  const activity =
    options.activity === false || activityCounts === undefined
      ? undefined
      : new ActivityRecorder(budgeted(activityCounts, storeTimeoutMs, {}, clock), options.activity, clock);
  if (activity !== undefined) observers.push(activity.observer);
  return {
    // The budget outermost: every call a mode or worker makes has it, and a call past it is let go at once.
    store: budgetedStore(tracing === undefined ? store : tracedStore(store, tracing), storeTimeoutMs, clock),
    tracing,
    clock,
    lockTimeoutMs,
    storeTimeoutMs,
    statementTimeoutMs: options.statementTimeoutMs ?? 30_000,
    retryAfterSeconds: options.retryAfterSeconds ?? 1,
    leaseSeconds: options.leaseSeconds ?? 30,
    maxAttempts: options.maxAttempts ?? 12,
    retryDelay: backoff(extend(defaultRetryDelay, options.retryDelay ?? {})),
    giveUpAfterSeconds: options.giveUpAfterSeconds ?? 3600,
    policy: resolvePolicy(options.policy),
    keyLimits: keyLimits(extend(defaultKeyLimits, options.keyLimits ?? {})),
    maxInputDepth: options.maxInputDepth ?? 64,
    retention:
      typeof options.retention === 'function'
        ? defaultRetention
        : checkRetention(extend(defaultRetention, options.retention ?? {})),
    retentionFor: (identity) => resolveRetention(options.retention, identity),
    describedBy: options.describedBy ?? specification.path,
    specification,
    problemBase: options.problemBase ?? defaultProblemBase,
    recall: cache?.recall ?? (() => undefined),
    readFirst: readFirstPolicy(
      oneOf('readBeforeClaim', options.readBeforeClaim ?? 'auto', ['auto', 'always', 'never']),
    ),
    emit: announcer(observers),
    close: async () => activity?.close(),
  };
}

/** Tells the observers every event; a setup warning once per operation, as each later request would only repeat it. */
function announcer(observers: readonly Observer[]): (event: RetrysafeEvent) => void {
  const warned = new Set<string>();
  return function announce(event) {
    if (event.type === 'raw-body-missing') {
      if (warned.has(event.operation)) return;
      warned.add(event.operation);
    }
    notify(observers, event);
  };
}

function oneOf<T extends string>(name: string, value: T, allowed: readonly T[]): T {
  if (!allowed.includes(value))
    throw new RetrysafeError('misuse', `${name} must be one of ${allowed.join(', ')}, got ${String(value)}.`);
  return value;
}

/** The range of each delay is checked with the options; here, that the ceiling is not below the first delay. */
function backoff(options: BackoffOptions): BackoffOptions {
  if (options.maxDelayMs < options.baseDelayMs) {
    throw new RetrysafeError(
      'misuse',
      `retryDelay needs baseDelayMs <= maxDelayMs, got ${options.baseDelayMs} and ${options.maxDelayMs}.`,
    );
  }
  return options;
}

/**
 * A data layer that ends transactions itself (Prisma) must leave an atomic
 * route's claim (lock wait and store budget) and completion (store budget)
 * time to finish, with time left for the handler; otherwise it would roll back
 * work that retrysafe's own budgets still allow.
 */
function fitsTransactionLimit(limitMs: number | undefined, lockTimeoutMs: number, storeTimeoutMs: number): void {
  if (limitMs === undefined) return;
  const needed = lockTimeoutMs + 2 * storeTimeoutMs;
  if (limitMs <= needed) {
    throw new RetrysafeError(
      'misuse',
      `The data layer ends a transaction after ${limitMs} ms, but an atomic route's lock wait and store budgets need ${needed} ms (lockTimeoutMs + 2 × storeTimeoutMs) before its handler's time: raise the transaction timeout or lower lockTimeoutMs and storeTimeoutMs.`,
    );
  }
}

/** Key limits whose range is checked with the options, the shortest key no longer than the longest. */
function keyLimits(limits: KeyLimits): KeyLimits {
  const { minBytes, maxBytes } = limits;
  if (maxBytes < minBytes) {
    throw new RetrysafeError(
      'misuse',
      `keyLimits.maxBytes must be at least keyLimits.minBytes (${minBytes}), got ${maxBytes}.`,
    );
  }
  return limits;
}
