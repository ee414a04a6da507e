import { describe, expect, it } from 'vitest';
import { adapters } from '../support/apps.js';
import { engines } from '../support/engines.js';
import { expectReplayOf, newKey, readChoices, useApp, useEngine } from './harness.js';

describe.each(engines)('first attempt and replay on $name', (engine) => {
  const ref = useEngine(engine);

  describe.each(readChoices)('reading before the claim: $readBeforeClaim', (options) => {
    describe.each(adapters)('through $name', (adapter) => {
      const t = useApp(ref, adapter, options);

      it('runs the handler on the first attempt and answers as the handler did', async () => {
        const key = newKey();
        const first = await t.post({ key, body: { sku: 'A', qty: 2 } });
        expect(first.status).toBe(201);
        const { id } = first.json as { id: number };
        expect(first.json).toEqual({ id, sku: 'A', qty: 2 });
        expect(first.headers.location).toBe(`/orders/${id}`);
        expect(first.headers['content-type']).toMatch(/^application\/json/);
        expect(first.headers['set-cookie']).toEqual(['session=secret']);
        expect(first.headers['x-debug']).toBe('1');
        expect(first.headers['idempotent-replayed']).toBeUndefined();
        expect(t.calls()).toBe(1);
        const { rows } = await t.database.query<{ id: number; tenant: string; sku: string; qty: number }>(
          'SELECT id, tenant, sku, qty FROM orders',
        );
        expect(rows).toEqual([{ id, tenant: 'tenant-a', sku: 'A', qty: 2 }]);
      });

      it('replays a retry with the same body: same status, bytes, Location and Content-Type, marked, without session headers', async () => {
        const key = newKey();
        const first = await t.post({ key, body: { sku: 'A', qty: 2 } });
        const retry = await t.post({ key, body: { sku: 'A', qty: 2 } });
        expectReplayOf(retry, first);
        expect(await t.orders()).toBe(1);
      });

      it('does not run the handler after a replay was sent, however many retries come', async () => {
        const key = newKey();
        const first = await t.post({ key, body: { sku: 'A', qty: 1 } });
        expect(t.calls()).toBe(1);
        for (let i = 0; i < 5; i += 1) {
          const retry = await t.post({ key, body: { sku: 'A', qty: 1 } });
          expectReplayOf(retry, first);
          expect(t.calls()).toBe(1);
        }
        // Nothing runs late either: give a handler that was started anyway the chance to show up.
        await new Promise((resolve) => setTimeout(resolve, 100));
        expect(t.calls()).toBe(1);
        expect(t.app.state.errors).toEqual([]);
        expect(await t.orders()).toBe(1);
      });

      it('stores only the allowed headers: never Set-Cookie or X-Debug', async () => {
        const key = newKey();
        const first = await t.post({ key, body: { sku: 'A', qty: 1 } });
        const record = await t.record(key);
        expect(record?.state).toBe('completed');
        expect(record?.response_status).toBe(201);
        expect(Buffer.from(record?.response_body ?? []).toString('latin1')).toBe(first.bodyBytes.toString('latin1'));
        const stored = record?.response_headers ?? {};
        expect(Object.keys(stored).sort()).toEqual(['content-type', 'location']);
        expect(stored).toEqual({ 'content-type': first.headers['content-type'], location: first.headers.location });
        expect(JSON.stringify(stored)).not.toMatch(/set-cookie|x-debug|session=secret/i);
      });

      it('keeps separate keys separate: each runs once and replays its own answer', async () => {
        const [k1, k2] = [newKey(), newKey()];
        const a = await t.post({ key: k1, body: { sku: 'A', qty: 1 } });
        const b = await t.post({ key: k2, body: { sku: 'A', qty: 1 } });
        expect(a.json).not.toEqual(b.json);
        expectReplayOf(await t.post({ key: k1, body: { sku: 'A', qty: 1 } }), a);
        expectReplayOf(await t.post({ key: k2, body: { sku: 'A', qty: 1 } }), b);
        expect(t.calls()).toBe(2);
        expect(await t.orders()).toBe(2);
      });
    });
  });
});
