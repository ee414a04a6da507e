import { describe, expect, it } from 'vitest';
import type { RetrysafeEvent } from '../../src/core/events.js';
import { RecoveryWorker } from '../../src/leases/recovery-worker.js';
import { engines } from '../support/engines.js';
import { expectProblem, newKey, useEngine } from '../adapters/harness.js';
import { SHOP_OPTIONS, useShop } from './harness.js';
import { gate } from '../support/gate.js';
import { frameworks } from './shop.js';
import { waitFor } from '../support/wait-for.js';

describe.each(engines)('transparent routes whose lease expires, on $name', (factory) => {
  const ref = useEngine(factory);

  describe.each(frameworks)('through $name', (framework) => {
    const events: RetrysafeEvent[] = [];
    const shop = useShop(ref, framework, { ...SHOP_OPTIONS, observers: [(event) => events.push(event)] });

    it('is marked unknown by the recovery worker, refuses retries 409, and the late worker changes nothing when it finishes', async () => {
      const key = newKey();
      shop.state.gate = gate();
      const first = shop.post(key, { sku: 'HANG' });
      await waitFor(async () => shop.runs(key) === 1 && (await shop.record(key))?.state === 'in_progress');
      // As if the process had died mid-route: nobody renews the lease any more.
      await shop.expireLease(key);

      const report = await new RecoveryWorker({ config: shop.config, operations: [] }).runOnce();
      expect(report).toMatchObject({ examined: 1, unknown: 1 });
      const unknown = await shop.record(key);
      expect(unknown).toMatchObject({ state: 'unknown', attempt: 2, owner_token: null });
      expect(unknown?.reason).toMatch(/not known/);

      const retry = await shop.post(key, { sku: 'HANG' });
      expectProblem(retry, 'outcome-unknown', 409);
      expect(shop.runs(key)).toBe(1);

      // The worker that lost its lease still answers its client, but its write is fenced.
      shop.state.gate.open();
      expect((await first).status).toBe(201);
      expect(await shop.record(key)).toEqual(unknown);
      expect(events).toContainEqual(expect.objectContaining({ type: 'fenced', attempt: 1 }));
      expect(await shop.orders()).toBe(1);
    });
  });
});
