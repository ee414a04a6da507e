import { IdempotentFetchError } from './fetch-error.js';
import type { RetryEvent } from './retry-event.js';

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
}

export const defaultRetryOptions = {
  attempts: 5,
  baseDelayMs: 250,
  maxDelayMs: 5000,
  deadlineMs: 30_000,
  attemptTimeoutMs: 10_000,
} as const;

export function resolveRetryOptions(options: RetryOptions = {}): ResolvedRetryOptions {
  const attempts = options.attempts ?? defaultRetryOptions.attempts;
  if (!Number.isInteger(attempts) || attempts < 1)
    invalid(`retry.attempts must be a whole number of at least 1, got ${attempts}.`);
  return {
    attempts,
    baseDelayMs: atLeast('baseDelayMs', options.baseDelayMs ?? defaultRetryOptions.baseDelayMs, 0, false),
    maxDelayMs: atLeast('maxDelayMs', options.maxDelayMs ?? defaultRetryOptions.maxDelayMs, 0, false),
    deadlineMs: atLeast('deadlineMs', options.deadlineMs ?? defaultRetryOptions.deadlineMs, 1, true),
    attemptTimeoutMs: atLeast(
      'attemptTimeoutMs',
      options.attemptTimeoutMs ?? defaultRetryOptions.attemptTimeoutMs,
      1,
      true,
    ),
    signal: options.signal,
    random: options.random ?? Math.random,
    onRetry: options.onRetry,
  };
}

function atLeast(name: string, value: number, min: number, infinityAllowed: boolean): number {
  const finite = Number.isFinite(value) || (infinityAllowed && value === Infinity);
  if (!finite || value < min)
    invalid(
      `retry.${name} must be a number of at least ${min}${infinityAllowed ? ' (or Infinity)' : ''}, got ${value}.`,
    );
  return value;
}

function invalid(message: string): never {
  throw new IdempotentFetchError('invalid-options', message, { attempts: 0, idempotencyKey: undefined });
}
