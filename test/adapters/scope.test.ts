import { describe, expect, it } from 'vitest';
import { adapters } from '../support/apps.js';
import { engines } from '../support/engines.js';
import { expectNothingOf, expectProblem, expectReplayOf, newKey, readChoices, useApp, useEngine } from './harness.js';

const body = { sku: 'A', qty: 1 };

describe.each(engines)('who may use a key, on $name', (engine) => {
  const ref = useEngine(engine);

  describe.each(readChoices)('reading before the claim: $readBeforeClaim', (options) => {
    describe.each(adapters)('through $name', (adapter) => {
      const t = useApp(ref, adapter, options);

      it('treats the same key from another tenant as a separate operation with its own new order', async () => {
        const key = newKey();
        const a = await t.post({ key, token: 'token-a', body });
        const b = await t.post({ key, token: 'token-b', body });
        expect(a.status).toBe(201);
        expect(b.status).toBe(201);
        expect(b.headers['idempotent-replayed']).toBeUndefined();
        expect((b.json as { id: number }).id).not.toBe((a.json as { id: number }).id);
        expect(b.headers.location).not.toBe(a.headers.location);
        expect(t.calls()).toBe(2);
        const { rows } = await t.database.query<{ tenant: string }>('SELECT tenant FROM orders ORDER BY id');
        expect(rows).toEqual([{ tenant: 'tenant-a' }, { tenant: 'tenant-b' }]);

        // Each tenant's retry replays its own answer, never the other's.
        expectReplayOf(await t.post({ key, token: 'token-b', body }), b);
        expectReplayOf(await t.post({ key, token: 'token-a', body }), a);
        expect(t.calls()).toBe(2);
        expect(await t.record(key, 'tenant-a')).toMatchObject({ state: 'completed' });
        expect(await t.record(key, 'tenant-b')).toMatchObject({ state: 'completed' });
      });

      it('treats the same key from another tenant with another body as separate, not as a fingerprint mismatch', async () => {
        const key = newKey();
        expect((await t.post({ key, token: 'token-a', body })).status).toBe(201);
        const b = await t.post({ key, token: 'token-b', body: { sku: 'B', qty: 5 } });
        expect(b.status).toBe(201);
        expect(b.json).toMatchObject({ sku: 'B', qty: 5 });
      });

      it('treats the same key on another operation as a separate operation', async () => {
        const key = newKey();
        const order = await t.post({ key, body }, '/orders');
        const refund = await t.post({ key, body }, '/refunds');
        expect(order.status).toBe(201);
        expect(refund.status).toBe(201);
        expect(refund.headers['idempotent-replayed']).toBeUndefined();
        expect(refund.headers.location).toMatch(/^\/refunds\//);
        expect(refund.bodyBytes.toString('latin1')).not.toBe(order.bodyBytes.toString('latin1'));
        expect(t.calls('orders.create@1')).toBe(1);
        expect(t.calls('refunds.create@1')).toBe(1);
        expect(await t.orders()).toBe(2);
        expect(await t.record(key, 'tenant-a', 'refunds.create@1')).toMatchObject({ state: 'completed' });

        expectReplayOf(await t.post({ key, body }, '/refunds'), refund);
        expectReplayOf(await t.post({ key, body }, '/orders'), order);
      });

      it('answers 403 to a caller who is no longer authorised, not the stored body', async () => {
        const key = newKey();
        const first = await t.post({ key, token: 'token-a', body });
        expect(first.status).toBe(201);
        const revoked = await t.post({ key, token: 'token-revoked', body });
        expectProblem(revoked, 'forbidden', 403);
        expect(revoked.headers['idempotent-replayed']).toBeUndefined();
        expect(revoked.headers.location).toBeUndefined();
        expectNothingOf(revoked, first);
        expect(t.calls()).toBe(1);
        // The refusal stored nothing: the authorised caller still gets the original.
        expectReplayOf(await t.post({ key, token: 'token-a', body }), first);
      });

      it('answers 403 to an unauthorised caller with a new key, and stores nothing', async () => {
        const key = newKey();
        expectProblem(await t.post({ key, token: 'token-revoked', body }), 'forbidden', 403);
        expect(t.calls()).toBe(0);
        expect(await t.records()).toBe(0);
        expect(await t.orders()).toBe(0);
      });

      it('answers 401 without a token or with an unknown one, before the key is looked at, and stores nothing', async () => {
        const key = newKey();
        expectProblem(await t.post({ key, token: null, body }), 'unauthenticated', 401);
        expectProblem(await t.post({ key, token: 'token-nobody', body }), 'unauthenticated', 401);
        expectProblem(await t.post({ token: null, body }), 'unauthenticated', 401);
        expect(t.calls()).toBe(0);
        expect(await t.records()).toBe(0);
        expect(await t.orders()).toBe(0);
      });

      it('answers 401, not the stored body, to an unauthenticated retry of a completed key', async () => {
        const key = newKey();
        const first = await t.post({ key, body });
        const anonymous = await t.post({ key, token: null, body });
        expectProblem(anonymous, 'unauthenticated', 401);
        expectNothingOf(anonymous, first);
        expect(t.calls()).toBe(1);
      });
    });
  });
});
