import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { jsonTextDefect } from './json-text.js';

const kindOf = (raw: Uint8Array | string): string | undefined => jsonTextDefect(raw)?.kind;

describe('jsonTextDefect', () => {
  describe('numbers', () => {
    it('accepts numbers a double holds exactly, however spelt', () => {
      for (const text of [
        '1',
        '-0',
        '1.0',
        '1e0',
        '10E-1',
        '0.1',
        '0.10',
        '1e-1',
        '12.5',
        '9007199254740993e-10',
        '5e-324',
        '1.7976931348623157e308',
        '[1,{"a":-2.50}]',
      ])
        expect(kindOf(text), text).toBeUndefined();
    });
    it('refuses numbers a double rounds, or cannot hold', () => {
      for (const text of [
        '0.10000000000000000001',
        '1.0000000000000001',
        '9007199254740993',
        '1e400',
        '-1e400',
        '1e-400',
        '{"a":[true,null,0.30000000000000000004]}',
      ])
        expect(kindOf(text), text).toBe('unsafe-number');
    });
    it('skips the digits inside strings, escaped quotes included', () => {
      expect(kindOf('{"a":"0.10000000000000000001","b\\"1e400":"\\\\","c":1}')).toBeUndefined();
    });
  });

  it('gives no verdict on text that is not JSON: the parser answers for it', () => {
    expect(kindOf('a=0.10000000000000000001')).toBeUndefined();
    expect(kindOf('{"\\x":1,"\\x":2}')).toBeUndefined();
  });

  describe('UTF-8', () => {
    const sku = (...bytes: number[]): Uint8Array =>
      Buffer.concat([Buffer.from('{"sku":"'), Buffer.from(bytes), Buffer.from('"}')]);

    it('refuses bytes that are not UTF-8: invalid, overlong, surrogate, truncated', () => {
      for (const bytes of [
        [0xff],
        [0xfe],
        [0x80],
        [0xc0, 0xaf],
        [0xe0, 0x80, 0xaf],
        [0xed, 0xa0, 0x80],
        [0xed, 0xbf, 0xbf],
        [0xe2, 0x82],
        [0xf0, 0x9f, 0x98],
        [0xf4, 0x90, 0x80, 0x80],
      ]) {
        expect(kindOf(sku(...bytes)), bytes.join(' ')).toBe('not-utf8');
      }
    });
    it('accepts every well-formed sequence, U+FFFD sent as itself included', () => {
      for (const bytes of [
        [0xef, 0xbf, 0xbd],
        [0xe2, 0x82, 0xac],
        [0xf0, 0x9f, 0x98, 0x80],
        [0xc3, 0xa9],
        [0xf4, 0x8f, 0xbf, 0xbf],
      ])
        expect(kindOf(sku(...bytes)), bytes.join(' ')).toBeUndefined();
    });
    it('takes a string as decoded already', () => {
      expect(kindOf('{"sku":"\ufffd"}')).toBeUndefined();
    });
  });

  describe('member names', () => {
    it('refuses a name given twice in one object, at any depth and however escaped', () => {
      for (const text of [
        '{"a":1,"a":2}',
        '{"sku":"a","sku":"b"}',
        '{"x":{"a":1,"a":2}}',
        '[{"a":1,"\\u0061":2}]',
        '{"a\\"b":1,"a\\u0022b":2}',
        '{"":1,"":2}',
        '{"a":{"b":1},"a":2}',
        '{"a":[1,{"c":[]}],"b":2,"a":3}',
      ]) {
        expect(kindOf(text), text).toBe('duplicate-member');
      }
    });
    it('accepts one name in sibling and nested objects, in arrays of objects, and as a value', () => {
      for (const text of [
        '{"a":{"a":1}}',
        '{"a":{"b":1},"b":2}',
        '[{"a":1},{"a":2}]',
        '{"x":[{"a":1},{"a":2}],"y":{"a":3}}',
        '{"a":"a","b":["a","a"]}',
        '{"a":1,"A":2,"a ":3}',
      ]) {
        expect(kindOf(text), text).toBeUndefined();
      }
    });
    it('finds the duplicate in an object of many members as in one of few', () => {
      const members = Array.from({ length: 1_000 }, (_, at) => `"m${at}":${at}`);
      expect(kindOf(`{${members.join(',')}}`)).toBeUndefined();
      expect(kindOf(`{${members.join(',')},"m3":0}`)).toBe('duplicate-member');
      expect(kindOf(`{${members.join(',')},"m999":0}`)).toBe('duplicate-member');
    });

    it('passes whatever JSON.stringify writes, as text and as its UTF-8 bytes', () => {
      fc.assert(
        fc.property(fc.jsonValue({ maxDepth: 5 }), (value) => {
          const text = JSON.stringify(value);
          expect(jsonTextDefect(text)).toBeUndefined();
          expect(jsonTextDefect(Buffer.from(text, 'utf8'))).toBeUndefined();
        }),
        { numRuns: 1000 },
      );
    });

    it('catches a name inserted twice, plain or escaped, wherever the object stands', () => {
      const object = fc.dictionary(fc.string(), fc.jsonValue({ maxDepth: 2 }), { minKeys: 1, maxKeys: 20 });
      fc.assert(
        fc.property(
          object,
          fc.nat(),
          fc.jsonValue({ maxDepth: 2 }),
          fc.boolean(),
          fc.jsonValue({ maxDepth: 2 }),
          fc.boolean(),
          (members, pick, extra, escaped, around, inArray) => {
            const names = Object.keys(members);
            const name = names[pick % names.length] as string;
            const entries = names.map((n) => `${JSON.stringify(n)}:${JSON.stringify(members[n])}`);
            // Escaped: its first code unit written as \uXXXX, which the parser reads as the same name.
            const spelt =
              escaped && name !== ''
                ? `"\\u${name.charCodeAt(0).toString(16).padStart(4, '0')}${JSON.stringify(name.slice(1)).slice(1)}`
                : JSON.stringify(name);
            entries.splice(pick % (entries.length + 1), 0, `${spelt}:${JSON.stringify(extra)}`);
            const duplicated = `{${entries.join(',')}}`;
            expect(JSON.parse(duplicated)).toHaveProperty([name]);
            const text = inArray
              ? `[${JSON.stringify(around)},${duplicated}]`
              : `{"around":${JSON.stringify(around)},"inner":${duplicated}}`;
            expect(jsonTextDefect(text)).toEqual({ kind: 'duplicate-member' });
          },
        ),
        { numRuns: 1000 },
      );
    });
  });
});
