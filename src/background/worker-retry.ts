import { backoffDelay, type BackoffOptions } from '../client/backoff.js';
import { RetrysafeError } from '../core/errors.js';
import { checkOptions, count, milliseconds, type OptionRules } from '../core/option-rules.js';
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

/** A worker's retry policy; its delays are kept as a due time, and bounded like a timer all the same. */
export const retryPolicyRules = {
  maxAttempts: count(1, 1000),
  baseDelayMs: milliseconds(0),
  maxDelayMs: milliseconds(0),
} as const satisfies OptionRules<RetryPolicy>;

export function resolveRetryPolicy(options: Partial<RetryPolicy> = {}): RetryPolicy {
  checkOptions(retryPolicyRules, options, 'retry.');
  const policy = extend(defaultRetryPolicy, options);
  if (policy.maxDelayMs < policy.baseDelayMs) {
    throw new RetrysafeError('misuse', 'The backoff needs baseDelayMs <= maxDelayMs.');
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
