import { describe, expect, it } from 'vitest';
import { isRetrysafeError } from './errors.js';
import { defineRoute } from './route.js';
import { resolveRetention } from './route-settings.js';

const identity = { tenant: 't1', operation: 'orders.create@1', key: 'k' };

describe('route settings', () => {
  it.each(['https://x.example/a b', 'https://x.example/<a>', '', 'https://x.example/\n'])(
    'refuses %j as describedBy when the route is defined',
    (url) => {
      let thrown: unknown;
      try {
        defineRoute({ operation: 'orders.create@1', describedBy: url });
      } catch (error) {
        thrown = error;
      }
      expect(isRetrysafeError(thrown, 'misuse')).toBe(true);
    },
  );

  it('accepts absolute and relative URLs', () => {
    expect(defineRoute({ operation: 'orders.create@1', describedBy: '/docs/idempotency#orders' }).describedBy).toBe(
      '/docs/idempotency#orders',
    );
  });

  it.each([Number.POSITIVE_INFINITY, Number.NaN, 0, -1])(
    'refuses a retention of %s seconds, set on a route or answered by its function',
    (seconds) => {
      const misuse = (run: () => unknown): boolean => {
        try {
          run();
        } catch (error) {
          return isRetrysafeError(error, 'misuse');
        }
        return false;
      };
      expect(misuse(() => defineRoute({ operation: 'orders.create@1', retention: { responseSeconds: seconds } }))).toBe(
        true,
      );
      expect(misuse(() => resolveRetention(() => ({ tombstoneSeconds: seconds }), identity))).toBe(true);
      expect(misuse(() => resolveRetention({ responseSeconds: seconds }, identity))).toBe(true);
    },
  );

  it('lays the route retention over the configuration, and a function decides per identity', () => {
    const base = { responseSeconds: 100, tombstoneSeconds: 1000 };
    expect(resolveRetention(undefined, identity, base)).toEqual(base);
    expect(resolveRetention({ responseSeconds: 5 }, identity, base)).toEqual({
      responseSeconds: 5,
      tombstoneSeconds: 1000,
    });
    expect(resolveRetention(({ tenant }) => ({ tombstoneSeconds: tenant === 't1' ? 7 : 9 }), identity, base)).toEqual({
      responseSeconds: 100,
      tombstoneSeconds: 7,
    });
  });
});
