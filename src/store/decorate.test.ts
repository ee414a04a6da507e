import { describe, expect, it } from 'vitest';
import { decorate } from './decorate.js';

interface Listing {
  list(limit: number, names?: readonly string[]): Promise<string>;
  count(): Promise<number>;
}

const inner: Listing = {
  list: (limit, names) => Promise.resolve(`${limit}:${names?.join(',') ?? 'all'}`),
  count: () => Promise.resolve(7),
};

describe('decorate', () => {
  it('forwards every call it does not override with all of its arguments, optional ones included', async () => {
    const decorated = decorate(inner, {});
    expect(await decorated.list(5, ['a', 'b'])).toBe('5:a,b');
    expect(await decorated.list(5)).toBe('5:all');
    expect(await decorated.count()).toBe(7);
  });

  it('uses an override in place of the inner method, and runs around every other call by name', async () => {
    const seen: string[] = [];
    const decorated = decorate(inner, {
      overrides: { count: async () => (await inner.count()) + 1 },
      around: (method, call) => {
        seen.push(method);
        return call();
      },
    });
    expect(await decorated.count()).toBe(8);
    expect(await decorated.list(2, ['x'])).toBe('2:x');
    expect(seen).toEqual(['list']);
  });

  it('keeps `this` for a class-based store', async () => {
    class Counter {
      private readonly base = 40;
      count(): Promise<number> {
        return Promise.resolve(this.base + 2);
      }
    }
    const decorated = decorate(new Counter(), {});
    // Taken off the decorator with no `this`, as a caller that passes the method on would.
    const count = decorated.count.bind(undefined);
    expect(await count()).toBe(42);
  });
});
