import { createHash } from 'node:crypto';
import type { OperationIdentity } from '../core/identity.js';

/**
 * The idempotency key a step sends downstream: the same for every attempt and
 * every recovery worker, different across tenants, operations and steps, and
 * revealing nothing of the client's key.
 */
export function downstreamKey(identity: OperationIdentity, step: string): string {
  const digest = createHash('sha256')
    .update(JSON.stringify([identity.tenant, identity.operation, identity.key, step]))
    .digest('base64url');
  return `rs_${digest}`;
}
