import { describe, expect, it } from 'vitest';
import { engines } from '../support/engines.js';
import { newKey, useEngine } from '../adapters/harness.js';
import { useShop } from './harness.js';
import { frameworks } from './shop.js';

describe.each(engines)('transparent answers that are not stored, on $name', (factory) => {
  const ref = useEngine(factory);

  describe.each(frameworks)('through $name', (framework) => {
    const shop = useShop(ref, framework);

    it('sends a 500 as it is, keeps no record, and lets the retry run the route again', async () => {
      const key = newKey();
      const failed = await shop.post(key, { sku: 'FAIL-500-ONCE' });
      expect(failed.status).toBe(500);
      expect(failed.json).toEqual({ error: 'upstream failed' });
      expect(await shop.record(key)).toBeUndefined();
      const retry = await shop.post(key, { sku: 'FAIL-500-ONCE' });
      expect(retry.status).toBe(201);
      expect(retry.headers['idempotent-replayed']).toBeUndefined();
      expect(shop.runs(key)).toBe(2);
      expect((await shop.record(key))?.state).toBe('completed');
    });

    it('drops the record when the route throws, even when the error handler answers 400, and lets the retry run again', async () => {
      const key = newKey();
      const thrown = await shop.post(key, { sku: 'THROW-ONCE' });
      expect(thrown.status).toBe(400);
      expect(thrown.json).toEqual({ error: 'handled' });
      expect(shop.state.errors).toHaveLength(1);
      expect(await shop.record(key)).toBeUndefined();
      const retry = await shop.post(key, { sku: 'THROW-ONCE' });
      expect(retry.status).toBe(201);
      expect(shop.runs(key)).toBe(2);
      expect((await shop.record(key))?.state).toBe('completed');
      expect(await shop.orders()).toBe(1);
    });
  });
});
