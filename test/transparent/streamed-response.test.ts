import { describe, expect, it } from 'vitest';
import { engines } from '../support/engines.js';
import { expectProblem, newKey, useEngine } from '../adapters/harness.js';
import { useShop } from './harness.js';
import { frameworks, STREAM_CHUNKS } from './shop.js';

describe.each(engines)('transparent streamed answers on $name', (factory) => {
  const ref = useEngine(factory);

  describe.each(frameworks)('through $name', (framework) => {
    const shop = useShop(ref, framework);

    it('sends a streamed body over the size limit in full, stores it as omitted, and answers the retry 410 with its Location', async () => {
      const key = newKey();
      const first = await shop.post(key, { sku: 'STREAM' });
      expect(first.status).toBe(201);
      expect(first.bodyBytes.toString('utf8')).toBe(STREAM_CHUNKS.join(''));
      const record = await shop.record(key);
      expect(record).toMatchObject({
        state: 'completed',
        response_status: 201,
        response_omitted: true,
        resource_ref: first.headers.location,
      });
      expect(record?.response_body?.byteLength).toBe(0);

      const retry = await shop.post(key, { sku: 'STREAM' });
      expectProblem(retry, 'response-not-stored', 410);
      expect(retry.headers.location).toBe(first.headers.location);
      expect(retry.json).toMatchObject({ resource: first.headers.location });
      expect(shop.runs(key)).toBe(1);
      expect(await shop.orders()).toBe(1);
    });
  });
});
