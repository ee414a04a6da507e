import { describe, expect, it } from 'vitest';
import { extend } from './extend.js';

describe('extend', () => {
  it('is the spread of both: the later member wins, the others are kept in order', () => {
    const base = { a: 1, b: 2, c: 3 };
    const extended = extend(base, { b: 20, d: 4 });
    expect(extended).toEqual({ ...base, b: 20, d: 4 });
    expect(Object.keys(extended)).toEqual(['a', 'b', 'c', 'd']);
  });

  it('changes neither object, and copies symbol members as a spread does', () => {
    const tag = Symbol('tag');
    const base = { a: 1, [tag]: 'kept' };
    const extra = { b: 2 };
    const extended = extend(base, extra);
    expect(extended[tag]).toBe('kept');
    expect(base).toEqual({ a: 1, [tag]: 'kept' });
    expect(extra).toEqual({ b: 2 });
    expect(extended).not.toBe(base);
  });
});
