import { hash } from 'node:crypto';
import type { OperationIdentity } from './identity.js';

/**
 * What an operation record keeps of the user who made it: SHA-256 over the
 * identity and the principal, 32 bytes. Bound to the identity, so that the
 * stored value names nobody without the key and the same user's records
 * cannot be matched with one another.
 */
export type PrincipalDigest = Uint8Array;

/** Separates this digest from any other SHA-256 of the same parts. */
const DOMAIN = 'retrysafe principal v1';

/** The digest of `principal` for `identity`; each part's length first, so no part can run into the next. */
export function principalDigest(identity: OperationIdentity, principal: string): PrincipalDigest {
  const parts = [DOMAIN, identity.tenant, identity.operation, identity.key, principal];
  return Buffer.from(
    hash('sha256', parts.map((part) => `${Buffer.byteLength(part)}:${part}`).join(''), 'binary'),
    'binary',
  );
}

/**
 * Whether a request may be answered from a record. A record stored without a
 * principal (before per-user scoping, or by a route without one) answers anyone
 * its route lets in; a record with one answers only the same principal.
 */
export function samePrincipal(stored: PrincipalDigest | undefined, requested: PrincipalDigest | undefined): boolean {
  return stored === undefined || (requested !== undefined && Buffer.compare(stored, requested) === 0);
}
