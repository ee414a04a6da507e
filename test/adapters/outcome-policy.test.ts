import { describe, expect, it } from 'vitest';
import { adapters, OUT_OF_STOCK_TYPE } from '../support/apps.js';
import { engines } from '../support/engines.js';
import { expectReplayOf, newKey, useApp, useEngine } from './harness.js';

describe.each(engines)('what is stored on $name', (engine) => {
  const ref = useEngine(engine);

  describe.each(adapters)('through $name', (adapter) => {
    const t = useApp(ref, adapter);

    it('rolls back a first attempt that throws: the framework answers 500, nothing is stored, no row; the retry runs and succeeds', async () => {
      const key = newKey();
      const body = { sku: 'FAIL-THROW-ONCE', qty: 1 };
      const first = await t.post({ key, body });
      expect(first.status).toBe(500);
      expect(first.headers['idempotent-replayed']).toBeUndefined();
      expect(t.app.state.errors).toHaveLength(1);
      expect(String(t.app.state.errors[0])).toContain('FAIL-THROW-ONCE: the handler failed after its insert');
      expect(await t.orders()).toBe(0);
      expect(await t.records()).toBe(0);

      const retry = await t.post({ key, body });
      expect(retry.status).toBe(201);
      expect(retry.headers['idempotent-replayed']).toBeUndefined();
      expect(t.calls()).toBe(2);
      expect(await t.orders()).toBe(1);
      expectReplayOf(await t.post({ key, body }), retry);
      expect(t.calls()).toBe(2);
    });

    it('rolls back a first attempt that answers 500: nothing is stored, no row; the retry runs and succeeds', async () => {
      const key = newKey();
      const body = { sku: 'FAIL-500-ONCE', qty: 1 };
      const first = await t.post({ key, body });
      expect(first.status).toBe(500);
      expect(first.json).toEqual({ error: 'the handler answered 500 after its insert' });
      expect(await t.orders()).toBe(0);
      expect(await t.records()).toBe(0);

      const retry = await t.post({ key, body });
      expect(retry.status).toBe(201);
      expect(t.calls()).toBe(2);
      expect(await t.orders()).toBe(1);
      expectReplayOf(await t.post({ key, body }), retry);
    });

    it('never caches a 500: a handler that keeps failing runs on every retry', async () => {
      const key = newKey();
      for (const sku of ['FAIL-500', 'FAIL-THROW']) {
        for (let attempt = 0; attempt < 3; attempt += 1) {
          const res = await t.post({ key: `${key}-${sku}`, body: { sku, qty: 1 } });
          expect(res.status).toBe(500);
          expect(res.headers['idempotent-replayed']).toBeUndefined();
        }
      }
      expect(t.calls()).toBe(6);
      expect(await t.orders()).toBe(0);
      expect(await t.records()).toBe(0);
    });

    it('does not store a transient 429: its insert is rolled back and the retry runs again', async () => {
      const key = newKey();
      const body = { sku: 'RATE-ONCE', qty: 1 };
      const first = await t.post({ key, body });
      expect(first.status).toBe(429);
      expect(first.headers['retry-after']).toBe('7');
      expect(first.headers['idempotent-replayed']).toBeUndefined();
      expect(await t.orders()).toBe(0);
      expect(await t.records()).toBe(0);

      const retry = await t.post({ key, body });
      expect(retry.status).toBe(201);
      expect(retry.headers['idempotent-replayed']).toBeUndefined();
      expect(t.calls()).toBe(2);
      expect(await t.orders()).toBe(1);
    });

    it('answers every 429 afresh while the handler keeps answering 429', async () => {
      const key = newKey();
      for (let attempt = 0; attempt < 3; attempt += 1) {
        expect((await t.post({ key, body: { sku: 'RATE', qty: 1 } })).status).toBe(429);
      }
      expect(t.calls()).toBe(3);
      expect(await t.records()).toBe(0);
    });

    it('stores a business rejection (422 out of stock) and replays it; the handler ran once', async () => {
      const key = newKey();
      const body = { sku: 'OUT-OF-STOCK', qty: 1 };
      const first = await t.post({ key, body });
      expect(first.status).toBe(422);
      expect(first.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(first.json).toMatchObject({ type: OUT_OF_STOCK_TYPE, status: 422 });
      expect(first.headers['idempotent-replayed']).toBeUndefined();
      // Stored as `failed`: a known outcome with no effect, replayed like a completed one.
      expect(await t.record(key)).toMatchObject({ state: 'failed', response_status: 422 });

      const retry = await t.post({ key, body });
      expect(retry.headers['set-cookie']).toBeUndefined();
      expectReplayOf(retry, first);
      expect(retry.json).toMatchObject({ type: OUT_OF_STOCK_TYPE });
      expect(t.calls()).toBe(1);
      expect(await t.orders()).toBe(0);
    });
  });
});
