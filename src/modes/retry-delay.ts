import { backoffCeiling, backoffDelay, type BackoffOptions } from '../client/backoff.js';

/** The rest after a failed leased attempt: up to 1 s after the first, doubling, at most 5 minutes. */
export const defaultRetryDelay: BackoffOptions = { baseDelayMs: 1000, maxDelayMs: 300_000 };

/**
 * Seconds a leased operation rests after failed attempt number `attempt` (1
 * for the first): half the exponential ceiling, plus a random share of the
 * other half. The fixed half keeps a worker from retrying at once; the random
 * half keeps operations that failed together from retrying together.
 */
export function retryDelaySeconds(
  attempt: number,
  options: BackoffOptions,
  random: () => number = Math.random,
): number {
  const retry = attempt - 1;
  return (backoffCeiling(retry, options) + backoffDelay(retry, options, random)) / 2 / 1000;
}
