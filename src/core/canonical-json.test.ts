import canonicalize from 'canonicalize';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { canonicalJson } from './canonical-json.js';
import { isRetrysafeError } from './errors.js';

function misuseOf(value: unknown): unknown {
  try {
    canonicalJson(value);
  } catch (error) {
    return error;
  }
  return undefined;
}

describe('canonicalJson', () => {
  it('writes the example of RFC 8785, section 3.2.2', () => {
    const sent = String.raw`{
      "numbers": [333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001],
      "string": "\u20ac$\u000F\u000aA'\u0042\u0022\u005c\\\"\/",
      "literals": [null, true, false]
    }`;
    expect(canonicalJson(JSON.parse(sent))).toBe(
      String.raw`{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],"string":"€$\u000f\nA'B\"\\\\\"/"}`,
    );
  });

  it('sorts members by the UTF-16 code units of their names, as RFC 8785, section 3.2.3 shows', () => {
    const names = ['\u20ac', '\r', '\ufb33', '1', '\u{1f600}', '\u0080', '\u00f6'];
    const sorted = ['\r', '1', '\u0080', '\u00f6', '\u20ac', '\u{1f600}', '\ufb33'];
    expect(canonicalJson(Object.fromEntries(names.map((name) => [name, 0])))).toBe(
      `{${sorted.map((name) => `${JSON.stringify(name)}:0`).join(',')}}`,
    );
  });

  it('sorts a few names and many alike, whichever way each is sorted', () => {
    const names = [
      '\u{1f600}',
      'b',
      '\ufb33',
      'a10',
      'A',
      'a',
      'a1',
      '\u00f6',
      '',
      'ab',
      'b0',
      '\r',
      'z',
      'Z',
      '_',
      '0',
    ];
    for (const count of [2, 3, 16, 17, 40]) {
      const value = Object.fromEntries(
        Array.from({ length: count }, (_, at) => [`${names[at % names.length] ?? ''}${'~'.repeat(at / 16)}`, at]),
      );
      expect(canonicalJson(value)).toBe(canonicalize(value));
    }
  });

  it('writes every JSON value exactly as earlier versions did, so stored fingerprints still match', () => {
    // Earlier versions hashed the `canonicalize` package's output; a record stored then must match the same request now.
    const json = fc.jsonValue({ maxDepth: 5 });
    fc.assert(
      fc.property(json, (value) => {
        expect(canonicalJson(value)).toBe(canonicalize(value));
      }),
      { numRuns: 2000 },
    );
    fc.assert(
      fc.property(
        fc.dictionary(
          fc.string({ unit: 'binary' }),
          fc.oneof(fc.double({ noNaN: true, noDefaultInfinity: true }), fc.string({ unit: 'binary' })),
        ),
        (value) => {
          expect(canonicalJson(value)).toBe(canonicalize(value));
        },
      ),
    );
  });

  it('leaves out and writes as null what JSON.stringify does', () => {
    const value = { a: undefined, b: () => 1, c: Symbol('c'), d: [undefined, () => 1, Symbol('d')], e: 1 };
    expect(canonicalJson(value)).toBe('{"d":[null,null,null],"e":1}');
    expect(canonicalJson(value)).toBe(JSON.stringify({ d: value.d, e: 1 }));
    // A hole in an array is an undefined item.
    const holey = new Array<number>(3);
    holey[0] = 1;
    holey[2] = 3;
    expect(canonicalJson(holey)).toBe('[1,null,3]');
  });

  it('calls toJSON, and leaves out a member whose toJSON gives undefined', () => {
    const at = new Date('2025-01-02T03:04:05.000Z');
    expect(canonicalJson({ at, gone: { toJSON: () => undefined } })).toBe('{"at":"2025-01-02T03:04:05.000Z"}');
  });

  it('writes the same value twice in one input, which is not a cycle', () => {
    const shared = { b: 1 };
    expect(canonicalJson({ x: shared, y: [shared, shared] })).toBe('{"x":{"b":1},"y":[{"b":1},{"b":1}]}');
  });

  it.each([
    ['undefined', undefined],
    ['a function', () => 1],
    ['a symbol', Symbol('x')],
    ['a BigInt', { amount: 1n }],
    ['NaN', [Number.NaN]],
    ['an infinity', { a: Number.NEGATIVE_INFINITY }],
    ['a lone surrogate in a value', { a: '\udc00' }],
    ['a lone surrogate in a name', { '\ud800': 1 }],
    ['a surrogate pair the wrong way round', '\udc00\ud800'],
  ])('refuses %s as misuse', (_name, value) => {
    expect(isRetrysafeError(misuseOf(value), 'misuse')).toBe(true);
  });

  it('refuses a value that contains itself, through an object, an array or toJSON', () => {
    const object: Record<string, unknown> = {};
    object.self = object;
    const array: unknown[] = [];
    array.push([array]);
    const viaToJson = { toJSON: (): unknown => ({ again: viaToJson }) };
    for (const value of [object, array, viaToJson]) expect(isRetrysafeError(misuseOf(value), 'misuse')).toBe(true);
  });
});
