import { describe, expect, it } from 'vitest';
import { isRetrysafeError } from '../core/errors.js';
import { afterFailure, defaultRetryPolicy, resolveRetryPolicy } from './worker-retry.js';

describe('the retry policy of relays and webhook workers', () => {
  const policy = resolveRetryPolicy({ maxAttempts: 5, baseDelayMs: 1000, maxDelayMs: 5000 });
  const delay = (attempt: number, random: number) => afterFailure({ ...policy, random: () => random }, attempt);

  it('waits a random time up to a ceiling that doubles with each failed attempt', () => {
    expect(delay(1, 0.999)).toEqual({ kind: 'retry', delaySeconds: 0.999 });
    expect(delay(2, 0.999)).toEqual({ kind: 'retry', delaySeconds: 1.998 });
    expect(delay(3, 0.5)).toEqual({ kind: 'retry', delaySeconds: 2 });
  });

  it('spreads the wait over the whole range, down to none (full jitter)', () => {
    expect(delay(3, 0)).toEqual({ kind: 'retry', delaySeconds: 0 });
  });

  it('stops the ceiling at maxDelayMs', () => {
    expect(delay(4, 0.999)).toEqual({ kind: 'retry', delaySeconds: 4.995 });
  });

  it('parks after the last attempt', () => {
    expect(delay(5, 0.5)).toEqual({ kind: 'park' });
    expect(delay(6, 0.5)).toEqual({ kind: 'park' });
  });

  it('defaults to 10 attempts, 1 s and 5 minutes, and refuses nonsense', () => {
    expect(resolveRetryPolicy()).toEqual(defaultRetryPolicy);
    expect(defaultRetryPolicy).toEqual({ maxAttempts: 10, baseDelayMs: 1000, maxDelayMs: 300_000 });
    for (const wrong of [
      { maxAttempts: 0 },
      { maxAttempts: 1.5 },
      { baseDelayMs: -1 },
      { baseDelayMs: 10, maxDelayMs: 5 },
    ]) {
      let error: unknown;
      try {
        resolveRetryPolicy(wrong);
      } catch (thrown) {
        error = thrown;
      }
      expect(isRetrysafeError(error, 'misuse'), JSON.stringify(wrong)).toBe(true);
    }
  });
});
