import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { engines } from '../support/engines.js';
import { useLeasedHarness } from './harness.js';

/**
 * An operation may be dropped only when no attempt can have called a step:
 * the first attempt, before its first step call. Once a step was started, any
 * failure keeps the record, so the same key can never run the effect afresh.
 */
describe.each(engines)('a started step keeps the operation on $name', (factory) => {
  const service = useLeasedHarness(factory);

  it('keeps the record when a take-over cannot reconcile a step the first attempt started, and says so', async () => {
    service.setUp();
    const key = randomUUID();
    const body = { order: `ord-${key}`, amount: 1100 };
    // The provider charges and the answer is lost; its lookup cannot tell, twice.
    await service.hideCharge(body.order, 2);
    await expect(service.pay(key, body)).rejects.toThrow();
    expect(await service.admin.count(service.chargeKey(key))).toBe(1);

    await service.expireLease(key);
    const report = await service.worker().runOnce();
    expect(report).toMatchObject({ examined: 1, incomplete: 1 });
    expect(await service.state(key)).toMatchObject({ state: 'in_progress', attempt: 2 });
    expect(service.events).toContainEqual(expect.objectContaining({ type: 'released', attempt: 2 }));

    // The lookup works again: the next attempt finds the charge and finishes without charging twice.
    await service.expireLease(key);
    expect(await service.worker().runOnce()).toMatchObject({ examined: 1, completed: 1 });
    expect(await service.state(key)).toMatchObject({ state: 'completed' });
    expect(await service.admin.count(service.chargeKey(key))).toBe(1);
    expect(await service.payments(body.order)).toBe(1);
  });

  it('answers a retry of that key from the record, never by starting the operation afresh', async () => {
    service.setUp();
    const key = randomUUID();
    const body = { order: `ord-${key}`, amount: 1200 };
    // The provider charges and the answer is lost; its lookup cannot tell, twice.
    await service.hideCharge(body.order, 2);
    await expect(service.pay(key, body)).rejects.toThrow();
    await service.expireLease(key);
    await service.worker().runOnce();
    const retry = await service.pay(key, body);
    // In progress (waiting for its next attempt), or resumed and finished: never claimed anew.
    expect([201, 409]).toContain(retry.status);
    expect(service.events.filter((event) => event.type === 'claimed')).toHaveLength(1);
    expect(await service.admin.count(service.chargeKey(key))).toBe(1);
  });
});
