import { parseItem } from 'structured-headers';

/** Bounds on an accepted `Idempotency-Key`, in bytes. */
export interface KeyLimits {
  /** Shortest accepted key. Default 1. */
  readonly minBytes: number;
  /** Longest accepted key. Default 255. */
  readonly maxBytes: number;
}

export const defaultKeyLimits: KeyLimits = { minBytes: 1, maxBytes: 255 };

/** Why a header value is not a usable key. */
export type KeyDefect =
  'missing' | 'empty' | 'too-long' | 'too-short' | 'not-visible-ascii' | 'repeated' | 'not-an-item' | 'not-a-string';

export type ParsedKey =
  | { readonly ok: true; readonly key: string }
  | { readonly ok: false; readonly defect: KeyDefect; readonly detail: string };

const VISIBLE_ASCII = /^[\x21-\x7e]*$/;

/**
 * Reads an `Idempotency-Key` header value. The key is an RFC 9651 String item,
 * as the IETF draft defines the field: `"abc"`, with no parameters. The same
 * key may come bare (`abc`, as Stripe and Adyen send it), and both forms give
 * the same key. One rule for both: anything that is not a plain String is
 * refused, never read as some other key. Quoted, the value must parse as an
 * item whose bare item is a String and which has no parameters; bare, it may
 * not hold what would make it another structured value or add parameters
 * (see `NOT_A_STRING`). Keys compare byte for byte: `ABC` and `abc` are two
 * keys. Frameworks join a repeated header with a comma, so a value holding more
 * than one item is rejected as repeated.
 */
export function parseIdempotencyKey(
  value: string | readonly string[] | undefined,
  limits: KeyLimits = defaultKeyLimits,
): ParsedKey {
  if (value === undefined) return fail('missing', 'The Idempotency-Key header is required for this request.');
  if (typeof value !== 'string') {
    if (value.length > 1) return fail('repeated', 'The Idempotency-Key header holds more than one value.');
    return parseIdempotencyKey(value[0], limits);
  }
  const trimmed = trimOws(value);
  if (trimmed === '') return fail('empty', 'The Idempotency-Key header is empty.');
  const key = trimmed.startsWith('"') ? unquote(trimmed) : bare(trimmed);
  if (typeof key !== 'string') return key;
  return checkKey(key, limits);
}

function unquote(value: string): string | ParsedKey {
  let item;
  try {
    item = parseItem(value);
  } catch {
    return looksRepeated(value)
      ? fail('repeated', 'The Idempotency-Key header holds more than one value.')
      : fail('not-an-item', 'The Idempotency-Key header is not a valid structured-field string.');
  }
  const [bareItem, parameters] = item;
  if (typeof bareItem !== 'string') return notAString();
  if (parameters.size > 0)
    return fail(
      'not-a-string',
      'The Idempotency-Key header may not carry structured-field parameters (`;name=value`).',
    );
  return bareItem;
}

/**
 * What a bare value may not look like: the start of a Boolean (`?1`), a Byte
 * Sequence (`:YWJj:`), a Date (`@1659578233`), a Display String (`%"x"`) or an
 * Inner List (`(a b)`), or parameters (`abc;p=1`). Digits stay text: a bare
 * `123` is the key `123`, like `"123"`.
 */
const NOT_A_STRING = /^[?:@%(]|[;()"]/;

/** A comma is how Node, the Fetch API and proxies join a repeated header, so a bare key may not hold one. */
function bare(value: string): string | ParsedKey {
  if (value.includes(',')) return fail('repeated', 'The Idempotency-Key header holds more than one value.');
  if (NOT_A_STRING.test(value)) return notAString();
  return value;
}

function notAString(): ParsedKey {
  return fail(
    'not-a-string',
    'The Idempotency-Key must be a string ("abc", or abc bare), without parameters; a boolean, byte sequence, date, inner list or parameters are refused.',
  );
}

/** Strips HTTP optional whitespace (SP and HTAB) only: `trim()` would also drop NBSP, BOM, VT and line breaks. */
function trimOws(value: string): string {
  let start = 0;
  let end = value.length;
  while (start < end && (value[start] === ' ' || value[start] === '\t')) start++;
  while (end > start && (value[end - 1] === ' ' || value[end - 1] === '\t')) end--;
  return value.slice(start, end);
}

function looksRepeated(value: string): boolean {
  return /^"(?:[^"\\]|\\.)*"[^,]*,/.test(value);
}

/**
 * Checks a key however it was read: visible ASCII, within the limits. The
 * `subject` names where it came from in the refusal's detail.
 */
export function checkKey(key: string, limits: KeyLimits, subject = 'The Idempotency-Key'): ParsedKey {
  if (key === '') return fail('empty', `${subject} is empty.`);
  if (!VISIBLE_ASCII.test(key)) {
    return fail('not-visible-ascii', `${subject} may only contain visible ASCII characters (0x21 to 0x7E).`);
  }
  const bytes = key.length; // visible ASCII: one byte per character
  if (bytes > limits.maxBytes) return fail('too-long', `${subject} is longer than ${limits.maxBytes} bytes.`);
  if (bytes < limits.minBytes) return fail('too-short', `${subject} is shorter than ${limits.minBytes} bytes.`);
  return { ok: true, key };
}

function fail(defect: KeyDefect, detail: string): ParsedKey {
  return { ok: false, defect, detail };
}
