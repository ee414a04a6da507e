import type { InputDefect } from './input-shape.js';

/** Whether a `Content-Type` names JSON: `application/json`, or a `+json` type such as `application/merge-patch+json`. */
export function isJsonMediaType(contentType: string | undefined): boolean {
  return /[/+]json\b/i.test(contentType ?? '');
}

/** What a JSON body's text can show that its parsed value no longer does. */
export type TextDefect = Extract<InputDefect, { readonly kind: 'not-utf8' | 'duplicate-member' | 'unsafe-number' }>;

// Fatal: a decoder that replaces bytes that are not UTF-8 with U+FFFD makes two different bodies one text.
const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * The first defect of a JSON body as received, or undefined: bytes that are
 * not UTF-8 (an invalid, overlong, truncated or surrogate sequence), a
 * member name given twice in one object (parsers keep one of the two, and
 * not all the same one), or a number its double does not hold exactly
 * (1.0, 1e0 and 1 are; 0.10000000000000000001, 1e400 and 1e-400 are not:
 * parsing rounds them, so two bodies that differ beyond a double's precision
 * would share a fingerprint, whose canonical form writes each double as its
 * shortest decimal, the value compared here). Bytes are decoded here, so an
 * adapter hands them on as read; a string is taken as decoded already.
 */
export function jsonTextDefect(raw: Uint8Array | string): TextDefect | undefined {
  if (typeof raw === 'string') return scan(raw);
  let text: string;
  try {
    text = utf8.decode(raw);
  } catch {
    return { kind: 'not-utf8' };
  }
  return scan(text);
}

const QUOTE = 0x22;
const COMMA = 0x2c;
const MINUS = 0x2d;
const ZERO = 0x30;
const NINE = 0x39;
const BACKSLASH = 0x5c;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;

/** The characters that may stand between JSON's strings and numbers: blanks, `:`, and the letters of true, false and null. */
const BETWEEN = new Uint8Array(128);
for (const char of ' \t\r\n:truefalsn') BETWEEN[char.charCodeAt(0)] = 1;

/** Past this many members, an object's names are looked up in a set: a list is quicker for the few a body usually has. */
const LISTED_NAMES = 16;

/**
 * One pass over the text: each number is compared with its double, and each
 * object's member names, unescaped (`"\u0061"` is `"a"`), are kept until the
 * object closes. Text that is not JSON stops the scan without a verdict: the
 * parser answers for it. The nesting is the parsed body's, already bounded by
 * `maxInputDepth`.
 */
function scan(text: string): TextDefect | undefined {
  // The names of each enclosing object so far, outermost first; undefined for an array.
  const enclosing: (Names | undefined)[] = [];
  let names: Names | undefined;
  let nameNext = false;
  for (let at = 0; at < text.length;) {
    const code = text.charCodeAt(at);
    if (code === QUOTE) {
      const end = stringEnd(text, at);
      if (nameNext && names !== undefined) {
        const name = memberName(text, at, end);
        if (name === undefined) return undefined;
        if (seen(names, name)) return { kind: 'duplicate-member' };
        names = remember(names, name);
        nameNext = false;
      }
      at = end;
    } else if (code === MINUS || (code >= ZERO && code <= NINE)) {
      const end = numberEnd(text, at);
      if (!exact(text.slice(at, end))) return { kind: 'unsafe-number' };
      at = end;
    } else if (code === OPEN_OBJECT || code === OPEN_ARRAY) {
      enclosing.push(names);
      names = code === OPEN_OBJECT ? [] : undefined;
      nameNext = names !== undefined;
      at += 1;
    } else if (code === CLOSE_OBJECT || code === CLOSE_ARRAY) {
      names = enclosing.pop();
      nameNext = false;
      at += 1;
    } else if (code === COMMA) {
      nameNext = names !== undefined;
      at += 1;
    } else if (code < 128 && BETWEEN[code] === 1) {
      at += 1;
    } else {
      return undefined;
    }
  }
  return undefined;
}

type Names = string[] | Set<string>;

function seen(names: Names, name: string): boolean {
  return Array.isArray(names) ? names.includes(name) : names.has(name);
}

/** `names` with `name`, turned into a set once the list is long: a body of many members must not cost their square. */
function remember(names: Names, name: string): Names {
  if (!Array.isArray(names)) return names.add(name);
  names.push(name);
  return names.length > LISTED_NAMES ? new Set(names) : names;
}

/** The member name quoted from `start` to `end`, as the parser reads it; undefined for an escape that is not JSON. */
function memberName(text: string, start: number, end: number): string | undefined {
  const name = text.slice(start + 1, end - 1);
  if (!name.includes('\\')) return name;
  try {
    return JSON.parse(text.slice(start, end)) as string;
  } catch {
    return undefined;
  }
}

/** The index after the string that opens at `start`. */
function stringEnd(text: string, start: number): number {
  const quote = text.indexOf('"', start + 1);
  // Only a quote right after a backslash can be escaped; then the string is walked escape by escape.
  if (quote !== -1 && text.charCodeAt(quote - 1) !== BACKSLASH) return quote + 1;
  let at = start + 1;
  for (let code = text.charCodeAt(at); at < text.length && code !== QUOTE; code = text.charCodeAt(at))
    at += code === BACKSLASH ? 2 : 1;
  return at + 1;
}

/** The index after the number token that starts at `start`. */
function numberEnd(text: string, start: number): number {
  let at = start + 1;
  while (at < text.length && '0123456789+-.eE'.includes(text[at] as string)) at += 1;
  return at;
}

function exact(token: string): boolean {
  const parsed = Number(token);
  if (!Number.isFinite(parsed)) return Number.isNaN(parsed);
  const written = String(parsed);
  // Most numbers are sent as the shortest decimal of their double, which is exact without comparing digits.
  return written === token || decimal(token) === decimal(written);
}

/**
 * A decimal written as its significant digits and the exponent of the last
 * one (`-12.50e1` → `-125e0`), zero as `0`; undefined for what is not a JSON
 * number, which the parser refuses.
 */
function decimal(written: string): string | undefined {
  const match = /^(-?)(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/.exec(written);
  if (match === null) return undefined;
  const [, sign, whole, fraction = '', exponent = '0'] = match;
  const digits = `${whole}${fraction}`.replace(/^0+/, '');
  if (digits === '') return '0';
  const significant = digits.replace(/0+$/, '');
  const scale = BigInt(exponent) - BigInt(fraction.length) + BigInt(digits.length - significant.length);
  return `${sign}${significant}e${scale}`;
}
