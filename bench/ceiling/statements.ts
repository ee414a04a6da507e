import { fingerprint } from '../../src/core/fingerprint.js';
import { completionOf, resolvePolicy } from '../../src/core/policy.js';
import { toReply } from '../../src/core/reply.js';
import { claimAtomicValues } from '../../src/postgres/sql/claim-atomic.js';
import { completeAtomicValues } from '../../src/postgres/sql/complete-atomic.js';
import { defaultRetention } from '../../src/store/operation-store.js';
import { ORDER_BODY, TENANT } from '../request.js';

/**
 * The values retrysafe binds for one order in atomic mode: the same
 * fingerprint and stored answer as scenario B, so only the key changes.
 */
const ORDER_OPERATION = 'orders.create@1';
const ORDER_FINGERPRINT = fingerprint({ method: 'POST', path: '/orders', body: JSON.parse(ORDER_BODY) as unknown });
const ORDER_COMPLETION = completionOf(
  toReply({ status: 201, headers: { location: '/orders/1' }, body: { id: '1', ...(JSON.parse(ORDER_BODY) as object) } }),
  resolvePolicy(),
  defaultRetention,
);

const claimRequest = (key: string) => ({ identity: { tenant: TENANT, operation: ORDER_OPERATION, key }, fingerprint: ORDER_FINGERPRINT, lockTimeoutMs: 3000, statementTimeoutMs: 30_000 });

/** The values of CLAIM_ATOMIC; $3 is the key. */
export function claimValues(key: string): unknown[] {
  return claimAtomicValues(claimRequest(key));
}

/** The values of COMPLETE_ATOMIC; $3 is the key. */
export function completeValues(key: string): unknown[] {
  return completeAtomicValues(claimRequest(key), ORDER_COMPLETION);
}
