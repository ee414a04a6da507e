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
export type KeyDefect = 'missing' | 'empty' | 'too-long' | 'too-short' | 'not-visible-ascii' | 'repeated' | 'not-an-item';

export type ParsedKey =
  | { readonly ok: true; readonly key: string }
  | { readonly ok: false; readonly defect: KeyDefect; readonly detail: string };

const VISIBLE_ASCII = /^[\x21-\x7e]*$/;

/**
 * Reads an `Idempotency-Key` header value. Two forms are accepted and yield the
 * same key: an RFC 9651 string item (`"abc"`, as the IETF draft writes it) and a
 * bare token (`abc`, as Stripe and Adyen do). Frameworks join a repeated header
 * with a comma, so a value holding more than one item is rejected as repeated.
 */
export function parseIdempotencyKey(value: string | readonly string[] | undefined, limits: KeyLimits = defaultKeyLimits): ParsedKey {
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
  const [bareItem] = item;
  if (typeof bareItem !== 'string') {
    return fail('not-an-item', 'The Idempotency-Key header must be a string or a token.');
  }
  return bareItem;
}

/** A comma is how Node, the Fetch API and proxies join a repeated header, so a bare key may not hold one. */
function bare(value: string): string | ParsedKey {
  if (value.includes(',')) return fail('repeated', 'The Idempotency-Key header holds more than one value.');
  return value;
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
