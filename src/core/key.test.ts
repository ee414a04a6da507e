import fc from 'fast-check';
import { serializeItem } from 'structured-headers';
import { describe, expect, it } from 'vitest';
import { defaultKeyLimits, type KeyDefect, parseIdempotencyKey } from './key.js';

const KEY = '8e03978e-40d5-43e8-bc93-6894a57f9324';

/** RFC 9651 §4.1.6: a string is `"`, its characters with `"` and `\` escaped, `"`. */
function sfString(value: string): string {
  return `"${value.replace(/[\\"]/g, (c) => `\\${c}`)}"`;
}

function keyOf(value: Parameters<typeof parseIdempotencyKey>[0], limits = defaultKeyLimits): string {
  const parsed = parseIdempotencyKey(value, limits);
  if (!parsed.ok) throw new Error(`expected a key from ${JSON.stringify(value)}, got defect ${parsed.defect}`);
  return parsed.key;
}

function defectOf(value: Parameters<typeof parseIdempotencyKey>[0], limits = defaultKeyLimits): KeyDefect {
  const parsed = parseIdempotencyKey(value, limits);
  if (parsed.ok)
    throw new Error(`expected a defect from ${JSON.stringify(value)}, got key ${JSON.stringify(parsed.key)}`);
  expect(parsed.detail).not.toBe('');
  return parsed.defect;
}

const visibleAsciiChar = fc.integer({ min: 0x21, max: 0x7e }).map((c) => String.fromCharCode(c));
/** Any single UTF-16 code unit or code point that is not 0x21..0x7E. */
const notVisibleAsciiChar = fc
  .oneof(
    fc.integer({ min: 0x00, max: 0x20 }),
    fc.constant(0x7f),
    fc.integer({ min: 0x80, max: 0x10ffff }),
    // Whitespace that String.prototype.trim removes but HTTP does not treat as whitespace.
    fc.constantFrom(0x0b, 0x0c, 0xa0, 0x1680, 0x2000, 0x2028, 0x2029, 0x202f, 0x3000, 0xfeff),
  )
  .map((c) => String.fromCodePoint(c));

describe('parseIdempotencyKey: accepted forms', () => {
  it('reads a bare token', () => {
    expect(parseIdempotencyKey(KEY)).toEqual({ ok: true, key: KEY });
  });

  it('reads an RFC 9651 string item to the same key as the bare token', () => {
    expect(keyOf(`"${KEY}"`)).toBe(KEY);
    expect(keyOf(`"${KEY}"`)).toBe(keyOf(KEY));
  });

  it('unescapes \\" and \\\\ in the quoted form', () => {
    expect(keyOf('"a\\"b"')).toBe('a"b');
    expect(keyOf('"a\\\\b"')).toBe('a\\b');
    expect(keyOf('"\\"\\\\\\""')).toBe('"\\"');
  });

  it('takes a quoted comma as part of the key, not as a second value', () => {
    expect(keyOf('"a,b"')).toBe('a,b');
  });

  it('ignores optional whitespace (SP and HTAB) around either form', () => {
    expect(keyOf(`  ${KEY}\t`)).toBe(KEY);
    expect(keyOf(`\t "${KEY}"  `)).toBe(KEY);
  });

  it('reads a one-element array, as frameworks give a header sent once', () => {
    expect(keyOf([KEY])).toBe(KEY);
    expect(keyOf([`"${KEY}"`])).toBe(KEY);
  });

  it('keeps digits and other visible ASCII of a bare key as text', () => {
    expect(keyOf('123')).toBe('123');
    expect(keyOf('123')).toBe(keyOf('"123"'));
    expect(keyOf("'abc'")).toBe("'abc'");
    expect(keyOf('YWJj+/=')).toBe('YWJj+/=');
  });

  it.each([
    ['parameters on the quoted form', '"abc";p=1'],
    ['a parameter without a value on the quoted form', '"abc";p'],
    ['parameters on the bare form', 'abc;p=1'],
    ['an inner list', '("abc")'],
    ['a bare inner list', '(abc)'],
    ['a boolean', '?1'],
    ['a byte sequence', ':YWJj:'],
    ['a date', '@1659578233'],
    ['a display string', '%"abc"'],
    ['a quote inside a bare key', 'ab"c'],
  ])('refuses %s as not a string, in either form, rather than read it as another key', (_name, value) => {
    expect(defectOf(value)).toBe('not-a-string');
  });

  it('compares keys byte for byte: case matters', () => {
    expect(keyOf('ABC')).not.toBe(keyOf('abc'));
  });

  it('accepts 1 and 255 bytes by default', () => {
    expect(keyOf('x')).toBe('x');
    expect(keyOf('x'.repeat(255))).toHaveLength(255);
    expect(keyOf(`"${'x'.repeat(255)}"`)).toHaveLength(255);
  });

  it('counts the length of the unescaped key, not of the header', () => {
    // 255 quotes, each escaped: 512 header bytes, a 255-byte key.
    expect(keyOf(sfString('"'.repeat(255)))).toBe('"'.repeat(255));
  });

  it('applies configured limits', () => {
    const limits = { minBytes: 16, maxBytes: 36 };
    expect(keyOf(KEY, limits)).toBe(KEY);
    expect(keyOf('x'.repeat(16), limits)).toHaveLength(16);
    expect(defectOf('x'.repeat(15), limits)).toBe('too-short');
    expect(defectOf('x'.repeat(37), limits)).toBe('too-long');
    expect(keyOf('x'.repeat(1000), { minBytes: 1, maxBytes: 1000 })).toHaveLength(1000);
  });
});

describe('parseIdempotencyKey: rejected values', () => {
  it.each<[string, Parameters<typeof parseIdempotencyKey>[0], KeyDefect]>([
    ['no header', undefined, 'missing'],
    ['an empty array of values', [], 'missing'],
    ['an empty value', '', 'empty'],
    ['an empty sf-string', '""', 'empty'],
    ['spaces', '   ', 'empty'],
    ['a tab', '\t', 'empty'],
    ['an empty value in a one-element array', [''], 'empty'],
    ['256 bytes', 'x'.repeat(256), 'too-long'],
    ['256 bytes quoted', `"${'x'.repeat(256)}"`, 'too-long'],
    ['a space inside', 'a b', 'not-visible-ascii'],
    ['a space inside the quoted form', '"a b"', 'not-visible-ascii'],
    ['a control character', 'a\u0001b', 'not-visible-ascii'],
    ['DEL', 'a\u007fb', 'not-visible-ascii'],
    ['a newline inside', 'a\nb', 'not-visible-ascii'],
    ['a tab inside', 'a\tb', 'not-visible-ascii'],
    ['é', 'caf\u00e9', 'not-visible-ascii'],
    ['an emoji', 'key-\u{1f511}', 'not-visible-ascii'],
    ['a latin-1 byte as Node decodes it', 'abc\u00ff', 'not-visible-ascii'],
    ['a no-break space before the key', '\u00a0abc', 'not-visible-ascii'],
    ['a byte-order mark before the key', '\ufeffabc', 'not-visible-ascii'],
    ['a line separator after the key', 'abc\u2028', 'not-visible-ascii'],
    ['a vertical tab after the key', 'abc\u000b', 'not-visible-ascii'],
    ['a newline before the key', '\nabc', 'not-visible-ascii'],
    ['two values in an array', ['a', 'b'], 'repeated'],
    ['the same value twice in an array', [KEY, KEY], 'repeated'],
    ['two bare values joined with ", "', 'a, b', 'repeated'],
    ['two bare values joined with ","', 'a,b', 'repeated'],
    ['two quoted values', '"a", "b"', 'repeated'],
    ['two quoted values without a space', '"a","b"', 'repeated'],
    ['a quoted and a bare value', '"a", b', 'repeated'],
    ['a bare and a quoted value', 'a, "b"', 'repeated'],
    ['a trailing comma', 'a,', 'repeated'],
    ['an unterminated sf-string', '"unterminated', 'not-an-item'],
    ['text after an sf-string', '"a"x', 'not-an-item'],
    ['two sf-strings without a comma', '"a" "b"', 'not-an-item'],
    ['an escape other than \\" and \\\\', '"\\n"', 'not-an-item'],
    ['a \\u escape', '"\\u0041"', 'not-an-item'],
    ['a control character in the quoted form', '"a\u0001"', 'not-an-item'],
    ['a tab in the quoted form', '"a\tb"', 'not-an-item'],
    // RFC 9651 strings are ASCII only, so the quoted form fails to parse rather than
    // reaching the visible-ASCII check: the defect differs from the bare form's.
    ['é in the quoted form', '"caf\u00e9"', 'not-an-item'],
    ['an emoji in the quoted form', '"\u{1f511}"', 'not-an-item'],
  ])('%s', (_name, value, defect) => {
    expect(defectOf(value)).toBe(defect);
  });

  it('reports the configured limit in the detail', () => {
    const parsed = parseIdempotencyKey('x'.repeat(11), { minBytes: 1, maxBytes: 10 });
    expect(parsed).toMatchObject({ ok: false, defect: 'too-long' });
    expect(!parsed.ok && parsed.detail).toContain('10 bytes');
  });
});

describe('parseIdempotencyKey: properties', () => {
  it('every 1..255 visible-ASCII string that cannot read as another structured value is a bare key of itself', () => {
    const token = fc
      .string({ unit: visibleAsciiChar, minLength: 1, maxLength: 255 })
      .filter((s) => !s.includes(',') && !/^[?:@%(]|[;()"]/.test(s));
    fc.assert(
      fc.property(token, (s) => {
        expect(parseIdempotencyKey(s)).toEqual({ ok: true, key: s });
      }),
    );
  });

  it('every 1..255 visible-ASCII string, `"` and `\\` included, round-trips through the quoted form', () => {
    fc.assert(
      fc.property(fc.string({ unit: visibleAsciiChar, minLength: 1, maxLength: 255 }), (s) => {
        expect(parseIdempotencyKey(sfString(s))).toEqual({ ok: true, key: s });
        // The same text as a conforming serialiser writes it.
        expect(serializeItem(s)).toBe(sfString(s));
      }),
    );
  });

  it('the quoted and bare forms of a token give the same key', () => {
    const token = fc
      .string({ unit: visibleAsciiChar, minLength: 1, maxLength: 255 })
      .filter((s) => !s.includes(',') && !/^[?:@%(]|[;()"]/.test(s));
    fc.assert(
      fc.property(token, (s) => {
        expect(keyOf(sfString(s))).toBe(keyOf(s));
      }),
    );
  });

  it('a key longer than the limit is refused in either form', () => {
    fc.assert(
      fc.property(fc.string({ unit: visibleAsciiChar, minLength: 256, maxLength: 600 }), (s) => {
        expect(defectOf(sfString(s))).toBe('too-long');
        if (!s.includes(',') && !/^[?:@%(]|[;()"]/.test(s)) expect(defectOf(s)).toBe('too-long');
      }),
    );
  });

  it('a value holding a character outside visible ASCII is never accepted, in either form, wherever it stands', () => {
    const visible = fc.string({ unit: visibleAsciiChar, maxLength: 40 });
    fc.assert(
      fc.property(visible, notVisibleAsciiChar, visible, fc.boolean(), (before, bad, after, quoted) => {
        // SP and HTAB around the whole value are optional whitespace, so keep them inside.
        const raw = /^[ \t]$/.test(bad) ? `x${before}${bad}${after}x` : `${before}${bad}${after}`;
        expect(parseIdempotencyKey(quoted ? sfString(raw) : raw).ok).toBe(false);
      }),
    );
  });

  it('whatever the header holds, an accepted key is 1..255 bytes of visible ASCII', () => {
    const anyHeader = fc.oneof(
      fc.string({ unit: 'binary', maxLength: 300 }),
      fc.string({ unit: fc.oneof(visibleAsciiChar, notVisibleAsciiChar), maxLength: 300 }),
      fc.string({ unit: fc.oneof(visibleAsciiChar, notVisibleAsciiChar), maxLength: 300 }).map(sfString),
      fc.array(fc.string({ unit: 'binary', maxLength: 40 }), { maxLength: 3 }),
    );
    fc.assert(
      fc.property(anyHeader, (value) => {
        const parsed = parseIdempotencyKey(value);
        if (parsed.ok) expect(parsed.key).toMatch(/^[\x21-\x7e]{1,255}$/);
      }),
      { numRuns: 2000 },
    );
  });
});
