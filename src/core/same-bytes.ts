import { timingSafeEqual } from 'node:crypto';

/**
 * Whether two secrets are the same bytes, in time that does not tell how
 * much of them matched. A string is taken as its UTF-8 bytes: two strings of
 * the same length in characters may differ in bytes, where
 * `timingSafeEqual` throws rather than answering false.
 */
export function sameBytes(a: string | Uint8Array, b: string | Uint8Array): boolean {
  const left = typeof a === 'string' ? Buffer.from(a, 'utf8') : a;
  const right = typeof b === 'string' ? Buffer.from(b, 'utf8') : b;
  return left.byteLength === right.byteLength && timingSafeEqual(left, right);
}
