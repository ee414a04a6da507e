import { describe, expect, it } from 'vitest';
import { resolveOperation } from '../../src/leases/resolve.js';
import { engines } from '../support/engines.js';
import { newKey, useEngine } from '../adapters/harness.js';
import { SHOP_OPTIONS, type Shop, useShop } from './harness.js';
import { frameworks } from './shop.js';

/** The statuses a route answers after its insert: a 5xx, and the transient ones a retry would otherwise run again on. */
const FAILED_STATUSES = [500, 503, 429] as const;

/** The route ran once for `key`, and its one order is the only row. */
async function expectOneRun(shop: Shop, key: string): Promise<void> {
  expect(shop.runs(key)).toBe(1);
  expect(await shop.orders()).toBe(1);
}

/** Sends `key` to a route that inserts then throws: the framework's error handling answers it. */
async function expectThrown(shop: Shop, key: string): Promise<void> {
  const thrown = await shop.post(key, { sku: 'THROW' });
  expect(thrown.status).toBe(400);
  expect(thrown.json).toEqual({ error: 'handled' });
  expect(shop.state.errors).toHaveLength(1);
}

/**
 * A transparent route's effects are its own: they stay whatever it answers
 * after them. Each route here inserts its order, then throws or answers a
 * failure; the retry with the same key must not insert a second one.
 */
describe.each(engines)('a transparent route that fails after its effect, on $name', (factory) => {
  const ref = useEngine(factory);

  describe.each(frameworks)('through $name', (framework) => {
    describe('by default (onFailure: store)', () => {
      const shop = useShop(ref, framework);

      it.each(FAILED_STATUSES)(
        'stores an answered %i and replays it, never running the route again',
        async (status) => {
          const key = newKey();
          const first = await shop.post(key, { sku: `FAIL-${status}` });
          expect(first.status).toBe(status);
          expect(first.json).toEqual({ error: 'upstream failed' });
          expect(first.headers['idempotent-replayed']).toBeUndefined();
          expect(await shop.record(key)).toMatchObject({
            state: 'failed',
            mode: 'transparent',
            response_status: status,
            owner_token: null,
          });

          const retry = await shop.post(key, { sku: `FAIL-${status}` });
          expect(retry.status).toBe(status);
          expect(retry.bodyBytes.equals(first.bodyBytes)).toBe(true);
          expect(retry.headers['idempotent-replayed']).toBe('true');
          await expectOneRun(shop, key);
        },
      );

      it('stores a thrown error as 500 route-failed: the framework answers the first request, every retry gets the problem replayed', async () => {
        const key = newKey();
        await expectThrown(shop, key);
        expect(await shop.record(key)).toMatchObject({
          state: 'failed',
          mode: 'transparent',
          response_status: 500,
          owner_token: null,
        });

        for (const retry of [await shop.post(key, { sku: 'THROW' }), await shop.post(key, { sku: 'THROW' })]) {
          expect(retry.status).toBe(500);
          expect(retry.headers['content-type']).toBe('application/problem+json');
          expect(retry.headers['idempotent-replayed']).toBe('true');
          expect(retry.json).toMatchObject({ type: 'https://retrysafe.dev/problems/route-failed', status: 500 });
        }
        await expectOneRun(shop, key);
      });
    });

    describe('with onFailure: unknown', () => {
      const shop = useShop(ref, framework, SHOP_OPTIONS, { onFailure: 'unknown' });

      it.each(FAILED_STATUSES)(
        'sends an answered %i as it is and keeps the operation unknown: the retry gets 409 outcome-unknown',
        async (status) => {
          const key = newKey();
          const first = await shop.post(key, { sku: `FAIL-${status}` });
          expect(first.status).toBe(status);
          expect(first.json).toEqual({ error: 'upstream failed' });
          const record = await shop.record(key);
          expect(record).toMatchObject({
            state: 'unknown',
            mode: 'transparent',
            owner_token: null,
            response_status: null,
          });
          expect(record?.reason).toContain(String(status));

          const retry = await shop.post(key, { sku: `FAIL-${status}` });
          expect(retry.status).toBe(409);
          expect(retry.json).toMatchObject({ type: 'https://retrysafe.dev/problems/outcome-unknown' });
          await expectOneRun(shop, key);
        },
      );

      it('keeps a thrown error unknown until an operator resolves it; the retry then gets the resolution replayed', async () => {
        const key = newKey();
        await expectThrown(shop, key);
        expect(await shop.record(key)).toMatchObject({ state: 'unknown', mode: 'transparent', owner_token: null });

        const waiting = await shop.post(key, { sku: 'THROW' });
        expect(waiting.status).toBe(409);
        expect(waiting.json).toMatchObject({ type: 'https://retrysafe.dev/problems/outcome-unknown' });

        const identity = { tenant: 'tenant-a', operation: 'orders.create@1', key };
        const resolution = {
          state: 'completed',
          reply: { status: 201, body: { reconciled: true } },
          reason: 'the order was found',
        } as const;
        expect(await resolveOperation(shop.config, identity, resolution)).toEqual({ resolved: true });
        const settled = await shop.post(key, { sku: 'THROW' });
        expect(settled.status).toBe(201);
        expect(settled.json).toEqual({ reconciled: true });
        expect(settled.headers['idempotent-replayed']).toBe('true');
        await expectOneRun(shop, key);
      });
    });
  });
});
