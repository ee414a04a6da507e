import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { afterEach, describe, expect, it } from 'vitest';
import type { RetrysafeEvent } from '../../src/core/events.js';
import { DIAGNOSTICS_PREFIX } from '../../src/observe/index.js';
import { adapters } from '../support/apps.js';
import { engines } from '../support/engines.js';
import { newKey, useApp, useEngine } from '../adapters/harness.js';

const TYPES = ['claimed', 'finished', 'replayed', 'fingerprint-mismatch', 'lock-wait', 'problem'] as const;

describe.each(engines)('node:diagnostics_channel on $name', (engine) => {
  const ref = useEngine(engine);
  describe.each(adapters)('through $name', (adapter) => {
    const t = useApp(ref, adapter);
    const received: RetrysafeEvent[] = [];
    const listener = (message: unknown): void => {
      received.push(message as RetrysafeEvent);
    };
    afterEach(() => {
      for (const type of TYPES) unsubscribe(`${DIAGNOSTICS_PREFIX}${type}`, listener);
      received.length = 0;
    });

    it('publishes every event on retrysafe:<type>, with no observer configured', async () => {
      for (const type of TYPES) subscribe(`${DIAGNOSTICS_PREFIX}${type}`, listener);
      const key = newKey();
      await t.post({ key, body: { sku: 'A' } });
      await t.post({ key, body: { sku: 'A' } });
      await t.post({ key, body: { sku: 'B' } });
      const types = received.map((e) => e.type).filter((type) => type !== 'lock-wait');
      expect(types).toEqual(['claimed', 'finished', 'replayed', 'fingerprint-mismatch', 'problem']);
      expect(received[0]).toMatchObject({
        type: 'claimed',
        mode: 'atomic',
        identity: { tenant: 'tenant-a', operation: 'orders.create@1', key },
      });
    });
  });
});
