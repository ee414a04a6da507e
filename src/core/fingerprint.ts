import { hash } from 'node:crypto';
import { canonicalJson } from './canonical-json.js';
import { isRetrysafeError, RetrysafeError } from './errors.js';

/** SHA-256 of a request's meaningful input, 32 bytes. */
export type Fingerprint = Uint8Array;

/**
 * Hashes the RFC 8785 canonical JSON form of `input`, so that field order,
 * number spelling (1, 1.0, 1e0) and string escapes do not change the result.
 * `undefined` members are dropped, as JSON does.
 */
export function fingerprint(input: unknown): Fingerprint {
  let canonical: string;
  try {
    canonical = canonicalJson(input);
  } catch (cause) {
    if (isRetrysafeError(cause, 'misuse')) throw cause;
    // A toJSON that threw, or nesting deeper than the stack.
    throw new RetrysafeError('misuse', 'The fingerprint input must be representable as JSON.', { cause });
  }
  // One call, no hash object per request; a Buffer from a string comes from Node's pool, where the digest's
  // own Buffer would be an ArrayBuffer of its own, allocated and freed outside the JavaScript heap.
  return Buffer.from(hash('sha256', canonical, 'binary'), 'binary');
}

export function sameFingerprint(a: Fingerprint, b: Fingerprint): boolean {
  return Buffer.compare(a, b) === 0;
}
