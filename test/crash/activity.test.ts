import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { crashLayers, useCrashRig } from './crash-rig.js';
import { waitFor } from '../support/wait-for.js';

/**
 * A service counts its answers in memory and adds them to the activity table
 * every ACTIVITY_FLUSH_MS: killed, it loses what it counted since its last
 * flush, never what it flushed before, and counts nothing twice.
 */
describe.each(crashLayers)('the activity counts of a killed service (%s)', (layer) => {
  const rig = useCrashRig(layer);
  const counted = async () =>
    (await rig.count(`SELECT coalesce(sum(n), 0)::int AS n FROM retrysafe_activity WHERE kind = $1`, 'new')) ?? -1;
  const newOrders = async (url: string, n: number) => {
    for (let i = 0; i < n; i += 1)
      expect((await rig.send(url, '/orders', randomUUID(), { sku: `sku-${i}` })).status).toBe(201);
  };

  it('loses at most the interval it was killed in, and a new process adds to the same buckets', async () => {
    const first = await rig.service({ ACTIVITY_FLUSH_MS: '100' });
    await newOrders(first.url, 10);
    // Flushed on its own, without a shutdown.
    await waitFor(async () => (await counted()) === 10);

    await newOrders(first.url, 5);
    await first.child.kill('SIGKILL');
    expect((await first.child.exited).signal).toBe('SIGKILL');
    const left = await counted();
    expect(left).toBeGreaterThanOrEqual(10);
    expect(left).toBeLessThanOrEqual(15);

    const second = await rig.service({ ACTIVITY_FLUSH_MS: '100' });
    await newOrders(second.url, 3);
    await waitFor(async () => (await counted()) === left + 3);
    await second.child.kill('SIGKILL');
  });
});
