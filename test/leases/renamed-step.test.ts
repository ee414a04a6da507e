import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { downstreamKey } from '../../src/modes/downstream-key.js';
import { RecoveryWorker } from '../../src/leases/recovery-worker.js';
import { engines } from '../support/engines.js';
import { OPERATION, useLeasedHarness } from './harness.js';
import { paymentRoute } from './payment-route.js';

/**
 * Step names are part of an operation's contract: a deploy that renames a
 * step in the middle of an operation must not call the downstream again
 * under the new name's key.
 */
describe.each(engines)('a step renamed between attempts on $name', (factory) => {
  const service = useLeasedHarness(factory);

  it('stops the operation as unknown, with a reason naming both steps, and calls nothing under the new name', async () => {
    service.setUp();
    const key = randomUUID();
    const body = { order: `ord-${key}`, amount: 1800 };
    await service.hideCharge(body.order);
    await expect(service.pay(key, body)).rejects.toThrow();
    expect(await service.state(key)).toMatchObject({ state: 'in_progress' });

    // The deployed version calls the same step "charge-card".
    await service.expireLease(key);
    const deployed = new RecoveryWorker({
      config: service.config,
      operations: [paymentRoute(service.providerUrl, service.calls, 'charge-card')],
    });
    expect(await deployed.runOnce()).toMatchObject({ examined: 1, unknown: 1 });

    const stopped = await service.state(key);
    expect(stopped?.state).toBe('unknown');
    expect(stopped?.reason).toMatch(
      /step "charge-card", which no earlier attempt started, while step "charge", started by an earlier attempt, has no result/,
    );
    expect(stopped?.reason).toMatch(/@version/);
    expect(
      await service.admin.count(downstreamKey({ tenant: 'tenant-a', operation: OPERATION, key }, 'charge-card')),
    ).toBe(0);
    expect(service.calls.charge).toBe(1);
    expect(await service.admin.count(service.chargeKey(key))).toBe(1);
  });

  it('lets a resumed handler ask first for the step that was started, then for new ones', async () => {
    service.setUp();
    const key = randomUUID();
    const body = { order: `ord-${key}`, amount: 1900 };
    await service.hideCharge(body.order);
    await expect(service.pay(key, body)).rejects.toThrow();
    await service.expireLease(key);
    expect(await service.worker().runOnce()).toMatchObject({ examined: 1, completed: 1 });
    expect(await service.state(key)).toMatchObject({ state: 'completed' });
    expect(await service.admin.count(service.chargeKey(key))).toBe(1);
  });
});
