/** The two numbers exponential backoff is made of. */
export interface BackoffOptions {
  /** Ceiling of the wait before the first retry; it doubles for each later one. */
  readonly baseDelayMs: number;
  /** The ceiling never grows past this. */
  readonly maxDelayMs: number;
}

/** The longest wait before retry number `retry` (0 for the first retry): min(max, base × 2^retry). */
export function backoffCeiling(retry: number, options: BackoffOptions): number {
  // 2^1023 is the largest finite power; past it the product would be Infinity or, with a zero base, NaN.
  const growth = 2 ** Math.min(Math.max(0, retry), 1023);
  return Math.min(options.maxDelayMs, options.baseDelayMs * growth);
}

/**
 * Full jitter: a wait drawn uniformly from [0, ceiling]. Spreading the whole
 * range keeps clients that failed together from retrying together.
 */
export function backoffDelay(retry: number, options: BackoffOptions, random: () => number = Math.random): number {
  const ceiling = backoffCeiling(retry, options);
  const draw = Math.min(1, Math.max(0, random()));
  return Math.floor(draw * ceiling);
}
