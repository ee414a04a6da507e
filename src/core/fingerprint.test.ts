import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isRetrysafeError } from './errors.js';
import { fingerprint, sameFingerprint } from './fingerprint.js';

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** JSON values as a request body holds them once parsed. */
const json: fc.Arbitrary<Json> = fc.jsonValue({ maxDepth: 4 }) as fc.Arbitrary<Json>;
const object = fc.dictionary(fc.string(), json, { minKeys: 1, maxKeys: 8 });

/** The same value with the keys of every object in another order, chosen by `order`. */
function reorder(value: Json, order: (keys: string[]) => string[]): Json {
  if (Array.isArray(value)) return value.map((v) => reorder(v, order));
  if (value === null || typeof value !== 'object') return value;
  // fromEntries makes own properties, so a `__proto__` key stays a key.
  return Object.fromEntries(order(Object.keys(value)).map((key) => [key, reorder(value[key]!, order)]));
}

/** A text that is equal for two values exactly when they are equal as JSON. */
function canon(value: Json): string {
  return JSON.stringify(reorder(value, (keys) => [...keys].sort()));
}

function shuffler(seed: number): (keys: string[]) => string[] {
  let state = seed >>> 0 || 1;
  const next = (): number => {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    return (state >>> 0) / 2 ** 32;
  };
  return (keys) => {
    const out = [...keys];
    for (let i = out.length - 1; i > 0; i--) {
      const j = Math.floor(next() * (i + 1));
      [out[i], out[j]] = [out[j]!, out[i]!];
    }
    return out;
  };
}

function same(a: unknown, b: unknown): boolean {
  return sameFingerprint(fingerprint(a), fingerprint(b));
}

function expectMisuse(input: unknown): void {
  let thrown: unknown;
  try {
    fingerprint(input);
  } catch (error) {
    thrown = error;
  }
  expect(isRetrysafeError(thrown, 'misuse'), `fingerprint(${String(input)}) threw ${String(thrown)}`).toBe(true);
}

describe('fingerprint', () => {
  it('is 32 bytes', () => {
    expect(fingerprint({ a: 1 })).toHaveLength(32);
    fc.assert(
      fc.property(json, (v) => {
        expect(fingerprint(v)).toHaveLength(32);
      }),
    );
  });

  it('is the SHA-256 of the RFC 8785 form', () => {
    const expected = createHash('sha256').update('{"a":1,"b":[true,null],"c":"\u00e9"}', 'utf8').digest();
    expect(sameFingerprint(fingerprint({ c: 'é', b: [true, null], a: 1.0 }), expected)).toBe(true);
  });

  it('does not depend on the order of fields, at any depth', () => {
    expect(same({ a: 1, b: { c: 2, d: 3 } }, { b: { d: 3, c: 2 }, a: 1 })).toBe(true);
    fc.assert(
      fc.property(json, fc.integer(), (value, seed) => {
        expect(same(value, reorder(value, shuffler(seed)))).toBe(true);
        expect(
          same(
            value,
            reorder(value, (keys) => [...keys].reverse()),
          ),
        ).toBe(true);
      }),
    );
  });

  it('does not depend on how a number is spelt in the JSON text', () => {
    const forms = ['{"a":1}', '{"a":1.0}', '{"a":1e0}', '{"a":1E0}', '{"a":10e-1}', '{"a":1.000}'];
    for (const text of forms) expect(same(JSON.parse(text), { a: 1 }), text).toBe(true);
    expect(same(JSON.parse('{"n":100}'), JSON.parse('{"n":1e2}'))).toBe(true);
    expect(same(JSON.parse('{"n":0.5}'), JSON.parse('{"n":5e-1}'))).toBe(true);
    expect(same(JSON.parse('{"n":-0}'), JSON.parse('{"n":0}'))).toBe(true);
  });

  it('does not depend on how a string is escaped in the JSON text', () => {
    expect(same(JSON.parse('{"a":"\\u0041"}'), JSON.parse('{"a":"A"}'))).toBe(true);
    expect(same(JSON.parse('{"\\u0061":"x"}'), JSON.parse('{"a":"x"}'))).toBe(true);
    expect(same(JSON.parse('"caf\\u00e9"'), JSON.parse('"café"'))).toBe(true);
    expect(same(JSON.parse('"\\/"'), JSON.parse('"/"'))).toBe(true);
    expect(same(JSON.parse('"\\ud83d\\udd11"'), '\u{1f511}')).toBe(true);
  });

  it('does not depend on whitespace or key order in the JSON text', () => {
    fc.assert(
      fc.property(json, (value) => {
        expect(same(JSON.parse(JSON.stringify(value, null, 2)), value)).toBe(true);
      }),
    );
  });

  it('drops undefined members, as JSON does', () => {
    expect(same({ a: 1, b: undefined }, { a: 1 })).toBe(true);
  });

  it('changes when a leaf value changes', () => {
    fc.assert(
      fc.property(object, fc.string(), json, json, (base, key, before, after) => {
        fc.pre(canon(before) !== canon(after));
        expect(same({ ...base, [key]: before }, { ...base, [key]: after })).toBe(false);
      }),
    );
    expect(same({ amount: 100 }, { amount: 101 })).toBe(false);
    expect(same({ amount: 100 }, { amount: '100' })).toBe(false);
    expect(same({ a: null }, { a: false })).toBe(false);
    expect(same({ a: [] }, { a: {} })).toBe(false);
    expect(same({ a: '' }, { a: null })).toBe(false);
  });

  it('changes when a nested leaf changes', () => {
    expect(same({ o: { items: [{ sku: 'A', qty: 1 }] } }, { o: { items: [{ sku: 'A', qty: 2 }] } })).toBe(false);
  });

  it('changes when a key is added or removed', () => {
    fc.assert(
      fc.property(object, fc.string(), json, (base, key, value) => {
        fc.pre(!Object.hasOwn(base, key));
        expect(same(base, { ...base, [key]: value })).toBe(false);
      }),
    );
    expect(same({ a: 1 }, { a: 1, b: null })).toBe(false);
  });

  it('changes when a key is renamed', () => {
    expect(same({ a: 1 }, { b: 1 })).toBe(false);
  });

  it('changes when the order of an array changes', () => {
    fc.assert(
      fc.property(fc.array(json, { minLength: 2, maxLength: 8 }), (items) => {
        const reversed = [...items].reverse();
        fc.pre(canon(items) !== canon(reversed));
        expect(same(items, reversed)).toBe(false);
      }),
    );
    expect(same({ tags: ['a', 'b'] }, { tags: ['b', 'a'] })).toBe(false);
  });

  it('tells apart values that a naive concatenation would confuse', () => {
    expect(same(['ab', 'c'], ['a', 'bc'])).toBe(false);
    expect(same({ a: 'b,c' }, { a: 'b', c: undefined })).toBe(false);
  });

  it('accepts values with toJSON, as JSON.stringify does', () => {
    const at = new Date('2025-01-02T03:04:05.000Z');
    expect(same({ at }, { at: '2025-01-02T03:04:05.000Z' })).toBe(true);
  });

  it('refuses input that is not JSON as misuse', () => {
    expectMisuse(undefined);
    expectMisuse(() => 1);
    expectMisuse(Symbol('x'));
    expectMisuse(1n);
    expectMisuse({ amount: 1n });
    expectMisuse(Number.NaN);
    expectMisuse({ a: Number.POSITIVE_INFINITY });
    // A lone surrogate cannot be written as UTF-8, so RFC 8785 has no form for it.
    expectMisuse('\ud800');
    expectMisuse(JSON.parse('{"a":"\\udc00"}'));
    const circular: Record<string, unknown> = {};
    circular.self = circular;
    expectMisuse(circular);
  });
});

describe('sameFingerprint', () => {
  it('is true for equal bytes, whatever their container', () => {
    const a = fingerprint({ a: 1 });
    expect(sameFingerprint(a, a)).toBe(true);
    expect(sameFingerprint(a, new Uint8Array(a))).toBe(true);
    expect(sameFingerprint(new Uint8Array(a), Buffer.from(a))).toBe(true);
  });

  it('is false when one byte differs, or the lengths differ', () => {
    const a = fingerprint({ a: 1 });
    const b = new Uint8Array(a);
    b[31] = b[31]! ^ 1;
    expect(sameFingerprint(a, b)).toBe(false);
    expect(sameFingerprint(a, a.subarray(0, 31))).toBe(false);
    expect(sameFingerprint(new Uint8Array(), a)).toBe(false);
  });

  it('agrees with equality of the canonical input', () => {
    fc.assert(
      fc.property(json, json, (x, y) => {
        fc.pre(canon(x) !== canon(y));
        expect(sameFingerprint(fingerprint(x), fingerprint(y))).toBe(false);
        expect(sameFingerprint(fingerprint(x), fingerprint(x))).toBe(true);
      }),
    );
  });
});
