import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { engines } from '../support/engines.js';
import { useLeasedHarness, waitFor } from './harness.js';

describe.each(engines)('lease renewal by the running handler on $name', (factory) => {
  const service = useLeasedHarness(factory);

  it('keeps a 1-second lease through a 3-second step: duplicates get 409, no recovery worker takes it over, one charge', async () => {
    service.setUp({ leaseSeconds: 1 });
    const key = randomUUID();
    const body = { order: `ord-${key}`, amount: 2100 };
    await service.admin.control({ mode: 'delay', ms: 3000, reference: body.order });
    const before = (await service.admin.stats()).requests;
    const first = service.pay(key, body);
    await waitFor(async () => (await service.admin.stats()).requests > before);

    const worker = service.worker();
    const duplicates: number[] = [];
    // Twice the lease, while the step is still inside the provider (the last check ends about a second before it answers).
    for (let check = 0; check < 4; check += 1) {
      await sleep(500);
      duplicates.push((await service.pay(key, body)).status);
      expect(await worker.runOnce()).toMatchObject({ examined: 0 });
    }
    expect(duplicates).toEqual([409, 409, 409, 409]);

    expect((await first).status).toBe(201);
    expect(service.events.filter((event) => event.type === 'taken-over')).toEqual([]);
    expect(await service.state(key)).toMatchObject({ state: 'completed', attempt: 1 });
    expect(await service.admin.count(service.chargeKey(key))).toBe(1);
    expect(await service.payments(body.order)).toBe(1);
  });
});
