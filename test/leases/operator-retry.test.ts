import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { retryOperation } from '../../src/leases/retry.js';
import { engines } from '../support/engines.js';
import { OPERATION, useLeasedHarness } from './harness.js';

describe.each(engines)('an operator puts an unknown operation back into recovery on $name', (factory) => {
  const service = useLeasedHarness(factory);

  it('resumes it once the cause is fixed: the started step is reconciled, never charged twice', async () => {
    service.setUp({ maxAttempts: 1 });
    const key = randomUUID();
    const identity = { tenant: 'tenant-a', operation: OPERATION, key };
    const body = { order: `ord-${key}`, amount: 1700 };
    await service.hideCharge(body.order);
    const first = await service.pay(key, body);
    expect(first.status).toBe(409);
    expect(await service.state(key)).toMatchObject({ state: 'unknown' });
    expect(await retryOperation(service.config, { ...identity, key: randomUUID() }, 'no such key')).toEqual({
      retried: false,
      why: 'not-unknown',
    });

    expect(await retryOperation(service.config, identity, 'the provider lookup answers again')).toEqual({
      retried: true,
    });
    expect(await service.worker().runOnce()).toMatchObject({ examined: 1, completed: 1 });
    expect(await service.state(key)).toMatchObject({ state: 'completed', attempt: 2 });
    expect(service.calls).toMatchObject({ charge: 1, reconcile: 2 });
    expect(await service.admin.count(service.chargeKey(key))).toBe(1);
    expect(await service.payments(body.order)).toBe(1);
    expect(await retryOperation(service.config, identity, 'again')).toEqual({ retried: false, why: 'not-unknown' });
  });
});
