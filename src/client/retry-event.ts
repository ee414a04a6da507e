/** Why an attempt is retried. */
export type RetryReason =
  /** The connection failed or was lost before an answer: `error` says how. */
  | { readonly reason: 'network'; readonly error: unknown }
  /** No answer within `attemptTimeoutMs`: `error` is the `TimeoutError`. */
  | { readonly reason: 'timeout'; readonly error: unknown }
  /** A retryable answer (503, 429, 409 in progress…); `retryAfterMs` is what its `Retry-After` asked for. */
  | { readonly reason: 'status'; readonly status: number; readonly retryAfterMs: number | undefined };

/** What `onRetry` is told before each wait for the next attempt. */
export type RetryEvent = RetryReason & {
  /** The attempt that just failed: 1 for the first. */
  readonly attempt: number;
  /** The wait before the next attempt, in ms: the longer of the jittered backoff and `Retry-After`. */
  readonly delayMs: number;
  /** The key every attempt carries; undefined when none is sent. */
  readonly idempotencyKey: string | undefined;
};
