import { describe, expect, it } from 'vitest';
import { adapters } from '../support/apps.js';
import { engines } from '../support/engines.js';
import { useApp, useEngine, newKey } from './harness.js';

/**
 * Keys apply to POST and PATCH only. On GET and PUT (safe or naturally
 * idempotent) a key is ignored, as documented: such a request is neither
 * refused for a missing key nor deduplicated, and nothing is stored.
 */
describe.each(engines)('methods that are not deduplicated, on $name', (engine) => {
  const ref = useEngine(engine);

  describe.each(adapters)('through $name', (adapter) => {
    const t = useApp(ref, adapter);

    it('does not deduplicate a GET with a key: the handler runs every time and nothing is replayed', async () => {
      const key = newKey();
      const first = await t.send('GET', '/orders', { key });
      const second = await t.send('GET', '/orders', { key });
      expect(first.status).toBe(200);
      expect(second.status).toBe(200);
      expect(first.json).toEqual({ invocation: 1 });
      expect(second.json).toEqual({ invocation: 2 });
      expect(second.headers['idempotent-replayed']).toBeUndefined();
      expect(t.calls('orders.read@1')).toBe(2);
      expect(await t.records()).toBe(0);
    });

    it('does not refuse a GET without a key, nor one with a malformed key', async () => {
      expect((await t.send('GET', '/orders')).status).toBe(200);
      expect((await t.send('GET', '/orders', { key: 'a, b' })).status).toBe(200);
      expect(t.calls('orders.read@1')).toBe(2);
    });

    it('does not deduplicate a PUT with a key, nor compare its bodies', async () => {
      const key = newKey();
      const first = await t.send('PUT', '/orders', { key, body: { qty: 1 } });
      const second = await t.send('PUT', '/orders', { key, body: { qty: 2 } });
      expect(first.status).toBe(200);
      expect(second.status).toBe(200);
      expect(second.headers['idempotent-replayed']).toBeUndefined();
      expect(second.json).toEqual({ invocation: 2 });
      expect(t.calls('orders.read@1')).toBe(2);
      expect(await t.records()).toBe(0);
    });

    it('still authenticates a GET: no token is 401', async () => {
      const res = await t.send('GET', '/orders', { key: newKey(), token: null });
      expect(res.status).toBe(401);
      expect(t.calls('orders.read@1')).toBe(0);
    });
  });
});
