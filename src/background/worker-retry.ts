import { backoffDelay, type BackoffOptions } from '../client/backoff.js';
import { RetrysafeError } from '../core/errors.js';
import { extend } from '../core/extend.js';

/** How often and how patiently failed work is tried again before it is parked. */
export interface RetryPolicy extends BackoffOptions {
  /** Attempts in all, the first included, before the work is parked as dead. Default 10. */
  readonly maxAttempts: number;
  /** A number in [0, 1) for the jitter. Default `Math.random`. */
  readonly random?: () => number;
}

/** Up to 10 attempts, waiting a random time up to 1 s, 2 s, 4 s, … and at most 5 minutes. */
export const defaultRetryPolicy: RetryPolicy = { maxAttempts: 10, baseDelayMs: 1000, maxDelayMs: 300_000 };

export function resolveRetryPolicy(options: Partial<RetryPolicy> = {}): RetryPolicy {
  const policy = extend(defaultRetryPolicy, options);
  if (!Number.isInteger(policy.maxAttempts) || policy.maxAttempts < 1) {
    throw new RetrysafeError('misuse', `maxAttempts must be a positive integer, got ${policy.maxAttempts}.`);
  }
  if (!(policy.baseDelayMs >= 0) || !(policy.maxDelayMs >= policy.baseDelayMs)) {
    throw new RetrysafeError('misuse', 'The backoff needs 0 <= baseDelayMs <= maxDelayMs.');
  }
  return policy;
}

/** What follows a failed attempt. */
export type AfterFailure = { readonly kind: 'retry'; readonly delaySeconds: number } | { readonly kind: 'park' };

/**
 * Exponential backoff with full jitter after attempt number `attempt` (1 for
 * the first) failed, or parking once the attempts are used up.
 */
export function afterFailure(policy: RetryPolicy, attempt: number): AfterFailure {
  if (attempt >= policy.maxAttempts) return { kind: 'park' };
  return { kind: 'retry', delaySeconds: backoffDelay(attempt - 1, policy, policy.random) / 1000 };
}
