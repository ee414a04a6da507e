import { IdempotentFetchError } from './fetch-error.js';
import type { RetryEvent } from './retry-event.js';
import { type Clock, systemClock } from '../core/clock.js';
import { count, milliseconds, type OptionRules, optionsProblem } from '../core/option-rules.js';

/** How hard and how long `idempotentFetch` tries. Every member is optional. */
export interface RetryOptions {
  /** Most attempts in all, the first included. Default 5; 1 turns retries off. */
  readonly attempts?: number;
  /** Ceiling of the wait before the first retry, doubled for each later one. Default 250 ms. */
  readonly baseDelayMs?: number;
  /** The backoff ceiling stops growing here. Default 5000 ms. A `Retry-After` may ask for longer. */
  readonly maxDelayMs?: number;
  /** The whole call, every attempt and wait included. Default 30 000 ms; `Infinity` for none. */
  readonly deadlineMs?: number;
  /** One attempt, until its response headers arrive. Default 10 000 ms; `Infinity` for none. */
  readonly attemptTimeoutMs?: number;
  /** Ends the whole call when it aborts; a `TimeoutError` reason counts as a deadline. */
  readonly signal?: AbortSignal;
  /** A number in [0, 1) for the jitter. Default `Math.random`. */
  readonly random?: () => number;
  /**
   * Called before each wait for a retry, to log or count retries. Not called
   * when the call ends instead. An exception it throws ends the call.
   */
  readonly onRetry?: (event: RetryEvent) => void;
  /** Times the deadline, attempt timeouts and waits. Default `systemClock`; tests pass `manualClock()`. */
  readonly clock?: Clock;
}

/** The options with every default applied. */
export interface ResolvedRetryOptions {
  readonly attempts: number;
  readonly baseDelayMs: number;
  readonly maxDelayMs: number;
  readonly deadlineMs: number;
  readonly attemptTimeoutMs: number;
  readonly signal: AbortSignal | undefined;
  readonly random: () => number;
  readonly onRetry: ((event: RetryEvent) => void) | undefined;
  readonly clock: Clock;
}

export const defaultRetryOptions = {
  attempts: 5,
  baseDelayMs: 250,
  maxDelayMs: 5000,
  deadlineMs: 30_000,
  attemptTimeoutMs: 10_000,
} as const;

/** Timers hold at most 2^31-1 ms; the deadline and an attempt's timeout may be Infinity, for none. */
export const retryOptionRules = {
  attempts: count(1, 1000),
  baseDelayMs: milliseconds(0),
  maxDelayMs: milliseconds(0),
  deadlineMs: milliseconds(1, { unbounded: true }),
  attemptTimeoutMs: milliseconds(1, { unbounded: true }),
} as const satisfies OptionRules<RetryOptions>;

export function resolveRetryOptions(options: RetryOptions = {}): ResolvedRetryOptions {
  const problem = optionsProblem(retryOptionRules, options, 'retry.');
  if (problem !== undefined)
    throw new IdempotentFetchError('invalid-options', problem, { attempts: 0, idempotencyKey: undefined });
  return {
    attempts: options.attempts ?? defaultRetryOptions.attempts,
    baseDelayMs: options.baseDelayMs ?? defaultRetryOptions.baseDelayMs,
    maxDelayMs: options.maxDelayMs ?? defaultRetryOptions.maxDelayMs,
    deadlineMs: options.deadlineMs ?? defaultRetryOptions.deadlineMs,
    attemptTimeoutMs: options.attemptTimeoutMs ?? defaultRetryOptions.attemptTimeoutMs,
    signal: options.signal,
    random: options.random ?? Math.random,
    onRetry: options.onRetry,
    clock: options.clock ?? systemClock,
  };
}
