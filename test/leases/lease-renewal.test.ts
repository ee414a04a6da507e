import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { manualClock } from '../../src/testing/manual-clock.js';
import { engines } from '../support/engines.js';
import { useLeasedHarness } from './harness.js';
import { paymentRoute } from './payment-route.js';
import { waitFor } from '../support/wait-for.js';

describe.each(engines)('lease renewal by the running handler on $name', (factory) => {
  const service = useLeasedHarness(factory);

  it('keeps a 1-second lease through a step of 3 seconds and more: duplicates get 409, no recovery worker takes it over, one charge', async () => {
    let release = (): void => {};
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    let holding = false;
    const payments = paymentRoute(service.providerUrl, service.calls);
    // Time passes in steps of half a second on both clocks: the process's (the renewal timer) by advancing the
    // manual clock, the database's (the lease's end) by moving the lease's end half a second closer.
    const clock = manualClock();
    const halfSecond = async (key: string): Promise<void> => {
      await service.engine.database.query(
        "UPDATE retrysafe_operations SET lease_expires_at = lease_expires_at - interval '500 milliseconds' WHERE key = $1",
        [key],
      );
      await clock.advance(500);
    };
    // A first step that lasts until the test lets it end, then the charge.
    service.setUp(
      { leaseSeconds: 1, clock },
      {
        ...payments,
        async handler(context) {
          await context.step('hold', async () => {
            holding = true;
            await released;
            return null;
          });
          return payments.handler(context);
        },
      },
    );
    const key = randomUUID();
    const body = { order: `ord-${key}`, amount: 2100 };
    const first = service.pay(key, body);
    await waitFor(() => Promise.resolve(holding));

    const worker = service.worker();
    const duplicates: number[] = [];
    for (let check = 0; check < 6; check += 1) {
      await halfSecond(key);
      duplicates.push((await service.pay(key, body)).status);
      expect(await worker.runOnce()).toMatchObject({ examined: 0 });
    }
    release();

    expect(duplicates).toEqual([409, 409, 409, 409, 409, 409]);
    expect((await first).status).toBe(201);
    expect(service.events.filter((event) => event.type === 'taken-over')).toEqual([]);
    expect(await service.state(key)).toMatchObject({ state: 'completed', attempt: 1 });
    expect(await service.admin.count(service.chargeKey(key))).toBe(1);
    expect(await service.payments(body.order)).toBe(1);
  });
});
