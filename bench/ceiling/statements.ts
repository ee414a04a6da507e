import { fingerprint } from '../../src/core/fingerprint.js';
import { completionOf, resolvePolicy } from '../../src/core/storage-policy.js';
import { toReply } from '../../src/core/answer/reply.js';
import { claimAtomicValues } from '../../src/postgres/sql/claim-atomic.js';
import { ids } from '../../src/postgres/sql/record-row.js';
import { completionValues } from '../../src/postgres/sql/completion.js';
import { defaultRetention } from '../../src/core/retention.js';
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

/** The values of CLAIM_ATOMIC; $3 is the key. */
export function claimValues(key: string): unknown[] {
  const identity = { tenant: TENANT, operation: ORDER_OPERATION, key };
  return claimAtomicValues({ identity, fingerprint: ORDER_FINGERPRINT, lockTimeoutMs: 3000, retention: defaultRetention });
}

/** The values of COMPLETE_ATOMIC; $3 is the key. */
export function completeValues(key: string): unknown[] {
  return [...ids({ tenant: TENANT, operation: ORDER_OPERATION, key }), ...completionValues(ORDER_COMPLETION)];
}
