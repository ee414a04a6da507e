import { createHmac } from 'node:crypto';
import { RetrysafeError } from './errors.js';

/**
 * Who asked for what: the tenant of the authenticated caller, the operation
 * with its version, and the client's key. Keys are never global: the same key
 * from another tenant or for another operation is another operation.
 */
export interface OperationIdentity {
  readonly tenant: string;
  /** `name@version`, for example `orders.create@1`. */
  readonly operation: string;
  readonly key: string;
}

/** The most bytes a tenant or a key may have: the columns' domain (`retrysafe_name`) holds 1 to 255. */
export const NAME_MAX_BYTES = 255;

// At most 253 ASCII characters: within the 3 to 255 bytes of the operation column's domain.
const OPERATION_NAME = /^[A-Za-z0-9][A-Za-z0-9._:/-]{0,200}@[A-Za-z0-9][A-Za-z0-9._-]{0,50}$/;

/**
 * Why a tenant cannot be stored in an identity, or undefined when it can: the
 * column holds 1 to 255 bytes of UTF-8 text, which cannot hold a NUL, and a lone
 * surrogate would be stored as U+FFFD, so that two tenants would share one name.
 */
export function tenantDefect(tenant: unknown): string | undefined {
  if (typeof tenant !== 'string') return `is a ${typeof tenant}, not a string`;
  if (Buffer.byteLength(tenant) > NAME_MAX_BYTES) return `is longer than ${NAME_MAX_BYTES} bytes`;
  if (tenant.includes('\0')) return 'holds a NUL character';
  if (!tenant.isWellFormed()) return 'holds a lone UTF-16 surrogate';
  return undefined;
}

/** Throws at configuration time when an operation name has no version. */
export function assertOperationName(operation: string): void {
  if (!OPERATION_NAME.test(operation)) {
    throw new RetrysafeError(
      'misuse',
      `Operation "${operation}" must be a name with a version, like "orders.create@1".`,
    );
  }
}

/**
 * A short keyed hash of an identity, to stand in for the raw key and tenant in
 * logs and traces. Without the secret it cannot be reversed or guessed.
 */
export function identityHash(identity: OperationIdentity, secret: string | Uint8Array): string {
  return createHmac('sha256', secret)
    .update(identity.tenant)
    .update('\0')
    .update(identity.operation)
    .update('\0')
    .update(identity.key)
    .digest('base64url')
    .slice(0, 16);
}
