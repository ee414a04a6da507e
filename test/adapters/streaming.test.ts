import { describe, expect, it } from 'vitest';
import { isRetrysafeError } from '../../src/index.js';
import { adapters } from '../support/apps.js';
import { engines } from '../support/engines.js';
import { newKey, useApp, useEngine } from './harness.js';

describe.each(engines)('a streamed answer on $name', (engine) => {
  const ref = useEngine(engine);
  describe.each(adapters)('through $name', (adapter) => {
    const t = useApp(ref, adapter);

    it('is refused as misuse: the handler error goes to the framework, its writes roll back and nothing is stored', async () => {
      const key = newKey();
      const first = await t.post({ key, body: { sku: 'STREAM' } });
      expect(first.status).toBe(500);
      expect(first.bodyBytes.toString('utf8')).not.toContain('data:');
      expect(t.app.state.errors).toHaveLength(1);
      expect(isRetrysafeError(t.app.state.errors[0], 'misuse')).toBe(true);
      expect(await t.orders()).toBe(0);
      expect(await t.records()).toBe(0);
      // Nothing was stored, so a retry runs again, and is refused again.
      expect((await t.post({ key, body: { sku: 'STREAM' } })).status).toBe(500);
      expect(t.calls()).toBe(2);
    });
  });
});
