import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { backoffCeiling, backoffDelay } from './backoff.js';

const options = fc.record({
  baseDelayMs: fc.integer({ min: 0, max: 10_000 }),
  maxDelayMs: fc.integer({ min: 0, max: 600_000 }),
});
const retry = fc.integer({ min: 0, max: 5000 });
const unit = fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true });

describe('backoff with full jitter', () => {
  it('draws every delay from [0, min(max, base × 2^retry)]', () => {
    fc.assert(
      fc.property(retry, options, unit, (n, o, r) => {
        const delay = backoffDelay(n, o, () => r);
        expect(Number.isInteger(delay)).toBe(true);
        expect(delay).toBeGreaterThanOrEqual(0);
        expect(delay).toBeLessThanOrEqual(backoffCeiling(n, o));
        expect(delay).toBeLessThanOrEqual(o.maxDelayMs);
      }),
    );
  });

  it('doubles the ceiling with each retry until the maximum caps it', () => {
    fc.assert(
      fc.property(retry, options, (n, o) => {
        expect(backoffCeiling(n + 1, o)).toBe(Math.min(o.maxDelayMs, 2 * backoffCeiling(n, o)));
        expect(backoffCeiling(n + 1, o)).toBeGreaterThanOrEqual(backoffCeiling(n, o));
      }),
    );
  });

  it('spans the whole range: a draw of 0 waits nothing, a draw near 1 waits nearly the ceiling', () => {
    const o = { baseDelayMs: 250, maxDelayMs: 5000 };
    expect([0, 1, 2, 3, 4, 5, 6].map((n) => backoffCeiling(n, o))).toEqual([250, 500, 1000, 2000, 4000, 5000, 5000]);
    expect(backoffDelay(3, o, () => 0)).toBe(0);
    expect(backoffDelay(3, o, () => 0.9999)).toBe(1999);
  });

  it('stays finite for huge retry counts and a zero base', () => {
    expect(backoffCeiling(10_000, { baseDelayMs: 250, maxDelayMs: 5000 })).toBe(5000);
    expect(backoffCeiling(10_000, { baseDelayMs: 0, maxDelayMs: 5000 })).toBe(0);
  });

  it('keeps a misbehaving random source inside the bounds', () => {
    const o = { baseDelayMs: 100, maxDelayMs: 1000 };
    expect(backoffDelay(0, o, () => 7)).toBe(100);
    expect(backoffDelay(0, o, () => -1)).toBe(0);
  });
});
