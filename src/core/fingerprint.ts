import { hash } from 'node:crypto';
import canonicalize from 'canonicalize';
import { RetrysafeError } from './errors.js';

/** SHA-256 of a request's meaningful input, 32 bytes. */
export type Fingerprint = Uint8Array;

/**
 * Hashes the RFC 8785 canonical JSON form of `input`, so that field order,
 * number spelling (1, 1.0, 1e0) and string escapes do not change the result.
 * `undefined` members are dropped, as JSON does.
 */
export function fingerprint(input: unknown): Fingerprint {
  let canonical: string | undefined;
  try {
    canonical = canonicalize(input);
  } catch (cause) {
    // BigInt, NaN, Infinity, a lone surrogate or a cycle.
    throw new RetrysafeError('misuse', 'The fingerprint input must be representable as JSON.', { cause });
  }
  if (canonical === undefined) {
    throw new RetrysafeError('misuse', 'The fingerprint input must be representable as JSON.');
  }
  // One call, no hash object to build and collect per request.
  return hash('sha256', canonical, 'buffer');
}

export function sameFingerprint(a: Fingerprint, b: Fingerprint): boolean {
  return Buffer.compare(a, b) === 0;
}
