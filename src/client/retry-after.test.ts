import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseHttpDate } from './http-date.js';
import { parseRetryAfter } from './retry-after.js';

const now = Date.UTC(2026, 0, 15, 12, 0, 0);

describe('parseRetryAfter', () => {
  it.each([
    ['120', 120_000],
    ['0', 0],
    [' 3 ', 3000],
    ['Thu, 15 Jan 2026 12:00:10 GMT', 10_000],
    ['Thursday, 15-Jan-26 12:00:10 GMT', 10_000],
    ['Thu Jan 15 12:00:10 2026', 10_000],
    ['Thu Jan  1 00:00:00 2026', 0],
    ['Wed, 14 Jan 2026 12:00:00 GMT', 0],
  ])('reads %j as %i ms', (value, ms) => {
    expect(parseRetryAfter(value, now)).toBe(ms);
  });

  it.each([
    null,
    undefined,
    '',
    '-1',
    '1.5',
    '1e3',
    '0x10',
    'soon',
    '5 seconds',
    'Thu, 15 Jan 2026 12:00:10 gmt',
    'Thu, 15 Jan 2026 12:00:10 UTC',
    '2026-01-15T12:00:10Z',
    'Thu, 31 Feb 2026 12:00:10 GMT',
    'Thu, 15 Jan 2026 24:00:00 GMT',
    'Thu, 15 Jan 2026 12:60:00 GMT',
  ])('ignores %j', (value) => {
    expect(parseRetryAfter(value, now)).toBeUndefined();
  });

  it('reads any delta-seconds exactly', () => {
    fc.assert(
      fc.property(fc.nat({ max: 10_000_000 }), (seconds) => {
        expect(parseRetryAfter(String(seconds), now)).toBe(seconds * 1000);
      }),
    );
  });

  it('reads any IMF-fixdate back to the time it was written for', () => {
    const instant = fc
      .integer({ min: Date.UTC(1970, 0, 1), max: Date.UTC(9999, 11, 31) })
      .map((ms) => ms - (ms % 1000));
    fc.assert(
      fc.property(instant, (ms) => {
        expect(parseHttpDate(new Date(ms).toUTCString(), now)).toBe(ms);
      }),
    );
  });
});

describe('parseHttpDate two-digit years (RFC 850)', () => {
  it.each([
    ['Sunday, 06-Nov-94 08:49:37 GMT', 1994],
    ['Monday, 06-Nov-30 08:49:37 GMT', 2030],
    ['Saturday, 06-Nov-77 08:49:37 GMT', 1977],
  ])('reads %s in year %i, never more than 50 years ahead', (value, year) => {
    expect(new Date(parseHttpDate(value, now) ?? NaN).getUTCFullYear()).toBe(year);
  });
});
