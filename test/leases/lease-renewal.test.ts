import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { manualClock } from '../../src/testing/manual-clock.js';
import { engines } from '../support/engines.js';
import { useLeasedHarness } from './harness.js';
import { paymentRoute } from './payment-route.js';
import { waitFor } from '../support/wait-for.js';

describe.each(engines)('lease renewal by the running handler on $name', (factory) => {
  const service = useLeasedHarness(factory);

  it('keeps a 9-second lease through a step of 27 seconds and more: duplicates get 409, no recovery worker takes it over, one charge', async () => {
    let release = (): void => {};
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    let holding = false;
    const payments = paymentRoute(service.providerUrl, service.calls);
    // Time passes in steps of a third of the lease on both clocks: the database's (the lease's end) by moving the
    // lease's end 3 seconds closer, the process's by advancing the manual clock to the next renewal. Each step waits
    // for its renewal to land, so a busy machine only stretches the real time between steps, and the lease keeps 6
    // seconds of real time in hand. Steps no longer than the store's budget (5 s, on the same manual clock) leave
    // each renewal the whole next step to be answered in.
    const clock = manualClock();
    const leaseEnd = async (key: string): Promise<Date | undefined> =>
      (
        await service.engine.database.query<{ until: Date }>(
          'SELECT lease_expires_at AS until FROM retrysafe_operations WHERE key = $1',
          [key],
        )
      ).rows[0]?.until;
    const thirdOfLease = async (key: string): Promise<void> => {
      const { rows } = await service.engine.database.query<{ until: Date }>(
        "UPDATE retrysafe_operations SET lease_expires_at = lease_expires_at - interval '3 seconds' WHERE key = $1 RETURNING lease_expires_at AS until",
        [key],
      );
      const moved = rows[0]?.until;
      if (moved === undefined) throw new Error(`No record for ${key}.`);
      await clock.advance(3_000);
      await waitFor(async () => new Date((await leaseEnd(key)) ?? 0) > new Date(moved), {
        what: 'the renewal to move the lease’s end later',
      });
    };
    // A first step that lasts until the test lets it end, then the charge.
    service.setUp(
      { leaseSeconds: 9, clock },
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
    for (let check = 0; check < 9; check += 1) {
      await thirdOfLease(key);
      duplicates.push((await service.pay(key, body)).status);
      expect(await worker.runOnce()).toMatchObject({ examined: 0 });
    }
    release();

    expect(duplicates).toEqual(Array.from({ length: 9 }, () => 409));
    expect((await first).status).toBe(201);
    expect(service.events.filter((event) => event.type === 'taken-over')).toEqual([]);
    expect(await service.state(key)).toMatchObject({ state: 'completed', attempt: 1 });
    expect(await service.admin.count(service.chargeKey(key))).toBe(1);
    expect(await service.payments(body.order)).toBe(1);
  });
});
