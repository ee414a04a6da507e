import { describe, expect, it } from 'vitest';
import { engines } from '../support/engines.js';
import { expectReplayOf, newKey, useEngine } from '../adapters/harness.js';
import type { Received } from '../support/http.js';
import { SHOP_OPTIONS, useShop } from './harness.js';
import { frameworks, LINKS } from './shop.js';

describe.each(engines)('transparent routes on $name', (factory) => {
  const ref = useEngine(factory);

  describe.each(frameworks)('through $name', (framework) => {
    const shop = useShop(ref, framework);

    it('runs the route once and has stored its answer, allowed headers only, before the client receives it', async () => {
      const key = newKey();
      const first = await shop.post(key, { sku: 'A' });
      expect(first.status).toBe(201);
      expect(first.headers['set-cookie']).toBeDefined();
      expect(first.headers['x-debug']).toBe('1');
      // Read as soon as the answer arrived: the record was written before it was sent.
      const record = await shop.record(key);
      expect(record).toMatchObject({
        state: 'completed',
        mode: 'transparent',
        response_status: 201,
        owner_token: null,
        response_omitted: false,
      });
      expect(record?.response_headers).toMatchObject({
        'content-type': first.headers['content-type'],
        location: first.headers.location,
      });
      // Express adds an ETag, which the default policy keeps too.
      expect(
        Object.keys(record?.response_headers ?? {}).every((name) =>
          ['content-type', 'location', 'etag', 'last-modified'].includes(name),
        ),
      ).toBe(true);
      expect(Buffer.from(record?.response_body ?? []).equals(first.bodyBytes)).toBe(true);
      expect(shop.runs(key)).toBe(1);
      expect(await shop.orders()).toBe(1);
    });

    it('replays a retry byte for byte with Idempotent-Replayed, without running the route or touching the record', async () => {
      const key = newKey();
      const first = await shop.post(key, { sku: 'A' });
      const stored = await shop.record(key);
      const retry = await shop.post(key, { sku: 'A' });
      expectReplayOf(retry, first);
      expect(shop.runs(key)).toBe(1);
      expect(await shop.orders()).toBe(1);
      expect(await shop.record(key)).toEqual(stored);
    });

    it('runs a request without a key as usual, each time, and stores nothing for it', async () => {
      const first = await shop.post(undefined, { sku: 'A' });
      const second = await shop.post(undefined, { sku: 'A' });
      expect([first.status, second.status]).toEqual([201, 201]);
      expect(second.headers['idempotent-replayed']).toBeUndefined();
      expect(shop.runs('')).toBe(2);
      expect(await shop.orders()).toBe(2);
      expect(await shop.records()).toBe(0);
    });

    it('keeps tenants apart: the same key from another tenant runs the route again', async () => {
      const key = newKey();
      const a = await shop.post(key, { sku: 'A' }, 'token-a');
      const b = await shop.post(key, { sku: 'A' }, 'token-b');
      expect([a.status, b.status]).toEqual([201, 201]);
      expect(b.headers['idempotent-replayed']).toBeUndefined();
      expect(shop.runs(key)).toBe(2);
      expect(await shop.orders()).toBe(2);
    });
  });
});

/** A header's lines as received, in order. */
const linesOf = (res: Received, name: string): string[] =>
  res.lines.filter(([line]) => line === name).map(([, value]) => value);

describe.each(engines.slice(0, 1))('transparent routes with a header on several lines on $name', (factory) => {
  const ref = useEngine(factory);

  describe.each(frameworks)('through $name', (framework) => {
    const shop = useShop(ref, framework, {
      ...SHOP_OPTIONS,
      policy: { ...SHOP_OPTIONS.policy, storedHeaders: ['content-type', 'location', 'link'] },
    });

    it('stores the Link lines the route set as a list and replays them line for line, in order', async () => {
      const key = newKey();
      const first = await shop.post(key, { sku: 'A' });
      expect(first.status).toBe(201);
      // A web `Headers` joins the lines before retrysafe sees them, as the Fetch standard says.
      const sent = framework.name === 'fetch (Hono)' ? [LINKS.join(', ')] : LINKS;
      expect(linesOf(first, 'link')).toEqual(sent);
      expect((await shop.record(key))?.response_headers).toMatchObject({ link: sent.length === 1 ? sent[0] : sent });
      const retry = await shop.post(key, { sku: 'A' });
      expectReplayOf(retry, first);
      expect(linesOf(retry, 'link')).toEqual(sent);
      expect(shop.runs(key)).toBe(1);
    });
  });
});
