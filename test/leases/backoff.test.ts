import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { engines } from '../support/engines.js';
import { useLeasedHarness } from './harness.js';
import { waitFor } from '../support/wait-for.js';

/**
 * A failed attempt waits before the next one (exponential backoff with
 * jitter, stored on the record), so a short downstream outage is ridden out
 * instead of turning the operation unknown.
 */
describe.each(engines)('retries spaced by backoff on $name', (factory) => {
  const service = useLeasedHarness(factory);
  const takeOvers = () => service.events.filter((event) => event.type === 'taken-over').length;

  it('rides out a 1.5-second provider outage: the running worker rests between attempts and finishes', async () => {
    service.setUp();
    const key = randomUUID();
    const body = { order: `ord-${key}`, amount: 1300 };
    await service.admin.control({ mode: 'fail-before-charge', reference: body.order, times: 1000 });
    await expect(service.pay(key, body)).rejects.toThrow('provider unavailable');
    const stop = new AbortController();
    const running = service.worker({ idleMs: 50 }).run(stop.signal);
    try {
      await sleep(1500);
      // Backoff: the first wait is at least 0.5 s and the second at least 1 s, so no more than two take-overs fit in the outage.
      expect(takeOvers()).toBeLessThanOrEqual(2);
      await service.admin.control({ mode: 'reset' });
      await waitFor(async () => (await service.state(key))?.state !== 'in_progress', { limitMs: 20_000 });
    } finally {
      stop.abort();
      await running;
    }
    expect(await service.state(key)).toMatchObject({ state: 'completed' });
    expect(service.events.filter((event) => event.type === 'unknown')).toEqual([]);
    expect(await service.admin.count(service.chargeKey(key))).toBe(1);
    expect(await service.payments(body.order)).toBe(1);
  });

  it('does not count a failure the downstream confirms had no effect toward unknown', async () => {
    service.setUp({ maxAttempts: 2 });
    const key = randomUUID();
    const body = { order: `ord-${key}`, amount: 1400 };
    await service.admin.control({ mode: 'fail-before-charge', reference: body.order, times: 3 });
    await expect(service.pay(key, body)).rejects.toThrow('provider unavailable');
    for (let pass = 0; pass < 3; pass += 1) {
      await service.expireLease(key);
      await service.worker().runOnce();
    }
    expect(await service.state(key)).toMatchObject({ state: 'completed', attempt: 4 });
    expect(await service.admin.count(service.chargeKey(key))).toBe(1);
  });

  it('gives up at the horizon in time, even when no failure counted', async () => {
    service.setUp({ giveUpAfterSeconds: 1 });
    const key = randomUUID();
    const body = { order: `ord-${key}`, amount: 1500 };
    await service.admin.control({ mode: 'fail-before-charge', reference: body.order, times: 100 });
    await expect(service.pay(key, body)).rejects.toThrow('provider unavailable');
    await sleep(1100);
    await service.expireLease(key);
    expect(await service.worker().runOnce()).toMatchObject({ examined: 1, unknown: 1 });
    const stopped = await service.state(key);
    expect(stopped?.state).toBe('unknown');
    expect(stopped?.reason).toMatch(/give-up horizon of 1 s/);
  });

  it('makes a retry wait for the backoff: 409 with Retry-After, then it resumes', async () => {
    // A rest of one to two minutes after the first failure: the early retry comes inside it however slow the machine.
    service.setUp({ retryDelay: { baseDelayMs: 120_000 } });
    const key = randomUUID();
    const body = { order: `ord-${key}`, amount: 1600 };
    await service.admin.control({ mode: 'fail-before-charge', reference: body.order });
    await expect(service.pay(key, body)).rejects.toThrow('provider unavailable');
    const released = service.events.find((event) => event.type === 'released');
    expect(released).toMatchObject({ attempt: 1 });
    expect(released?.type === 'released' && released.retryInSeconds).toBeGreaterThan(0);

    const early = await service.pay(key, body);
    expect(early.status).toBe(409);
    expect(((await early.json()) as { type: string }).type).toMatch(/operation-in-progress$/);
    expect(Number(early.headers.get('retry-after'))).toBeGreaterThanOrEqual(30);
    expect(await service.state(key)).toMatchObject({ state: 'in_progress', attempt: 1 });

    await service.expireLease(key);
    expect((await service.pay(key, body)).status).toBe(201);
    expect(await service.admin.count(service.chargeKey(key))).toBe(1);
  });
});
