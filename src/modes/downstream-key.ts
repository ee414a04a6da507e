import { hash } from 'node:crypto';
import type { OperationIdentity } from '../core/identity.js';

/**
 * The idempotency key a step sends downstream: the same for every attempt and
 * every recovery worker, different across tenants, operations and steps, and
 * revealing nothing of the client's key.
 */
export function downstreamKey(identity: OperationIdentity, step: string): string {
  return `rs_${hash('sha256', JSON.stringify([identity.tenant, identity.operation, identity.key, step]), 'base64url')}`;
}
