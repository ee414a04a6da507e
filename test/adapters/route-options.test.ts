import { describe, expect, it } from 'vitest';
import { adapters, holdNextReply, IMPORTS_POLICY, importsRetention } from '../support/apps.js';
import { engines } from '../support/engines.js';
import { expectProblem, expectReplayOf, newKey, useApp, useEngine } from './harness.js';
import { waitFor } from '../support/wait-for.js';

const LINK = `<${IMPORTS_POLICY}>; rel="describedby"`;

describe.each(engines)('route options on $name', (engine) => {
  const ref = useEngine(engine);

  describe.each(adapters)('through $name', (adapter) => {
    const t = useApp(ref, adapter, { retention: { tombstoneSeconds: 86_400 } });
    const post = (body: unknown, token?: string) =>
      t.post({ body, ...(token === undefined ? {} : { token }) }, '/imports');

    it('takes the key from the body by the route key function, and replays on it without any Idempotency-Key header', async () => {
      const importRef = newKey();
      const first = await post({ ref: importRef, sku: 'A' });
      expect(first.status).toBe(201);
      const retry = await post({ ref: importRef, sku: 'A' });
      expectReplayOf(retry, first);
      expect(t.calls('imports.create@1')).toBe(1);
      expect((await t.record(importRef, 'tenant-a', 'imports.create@1'))?.state).toBe('completed');
    });

    it('checks a key from a function like a header key: missing, and not visible ASCII, are 400 before anything runs', async () => {
      const missing = await post({ sku: 'A' });
      expectProblem(missing, 'idempotency-key-missing', 400);
      const invalid = await post({ ref: 'caf\u00e9 1', sku: 'A' });
      expectProblem(invalid, 'idempotency-key-invalid', 400);
      expect((invalid.json as { detail: string }).detail).toBe(
        'The idempotency key may only contain visible ASCII characters (0x21 to 0x7E).',
      );
      const long = await post({ ref: 'x'.repeat(256), sku: 'A' });
      expectProblem(long, 'idempotency-key-invalid', 400);
      expect(t.calls('imports.create@1')).toBe(0);
      expect(await t.records()).toBe(0);
    });

    it('answers a duplicate of a running attempt 409 at once when the route waits for no one (lockTimeoutMs: 0)', async () => {
      // PGlite runs one transaction at a time: a duplicate never meets a running attempt there.
      if (!t.concurrent) return;
      const importRef = newKey();
      const held = holdNextReply(t.app.state);
      const first = post({ ref: importRef, sku: 'A' });
      await waitFor(() => t.calls('imports.create@1') === 1);
      const duplicate = await post({ ref: importRef, sku: 'A' });
      expectProblem(duplicate, 'operation-in-progress', 409);
      expect(duplicate.headers['retry-after']).toBe('1');
      held.open();
      expect((await first).status).toBe(201);
      expect(t.calls('imports.create@1')).toBe(1);
      expectReplayOf(await post({ ref: importRef, sku: 'A' }), await first);
    });

    it('links the route policy from its 400, 409 and 422 answers, and from no other', async () => {
      const importRef = newKey();
      const first = await post({ ref: importRef, sku: 'A' });
      expect(first.headers.link).toBeUndefined();
      expect((await post({ ref: importRef, sku: 'A' })).headers.link).toBeUndefined();
      const mismatch = await post({ ref: importRef, sku: 'B' });
      expectProblem(mismatch, 'fingerprint-mismatch', 422);
      expect(mismatch.headers.link).toBe(LINK);
      expect((await post({ sku: 'A' })).headers.link).toBe(LINK);
      const unauthenticated = await t.post({ token: null, body: { ref: newKey() } }, '/imports');
      expectProblem(unauthenticated, 'unauthenticated', 401);
      expect(unauthenticated.headers.link).toBeUndefined();
      // A route without a policy links nothing.
      expect((await t.post({ body: { sku: 'A' } })).headers.link).toBeUndefined();
    });

    it('links the policy from a 409 of a duplicate that finds the first attempt running', async () => {
      if (!t.concurrent) return;
      const importRef = newKey();
      const held = holdNextReply(t.app.state);
      const first = post({ ref: importRef, sku: 'A' });
      await waitFor(() => t.calls('imports.create@1') === 1);
      const duplicate = await post({ ref: importRef, sku: 'A' });
      expectProblem(duplicate, 'operation-in-progress', 409);
      expect(duplicate.headers.link).toBe(LINK);
      expect(t.app.state.hooks).toContain('conflict:operation-in-progress');
      held.open();
      expect((await first).status).toBe(201);
    });

    it('calls the route hooks on a replay, a conflict and every refusal', async () => {
      const importRef = newKey();
      await post({ ref: importRef, sku: 'A' });
      expect(t.app.state.hooks).toEqual([]);
      await post({ ref: importRef, sku: 'A' });
      expect(t.app.state.hooks).toEqual(['replay']);
      await post({ ref: importRef, sku: 'B' });
      await post({ sku: 'A' });
      await t.post({ token: 'token-revoked', body: { ref: newKey() } }, '/imports');
      expect(t.app.state.hooks).toEqual([
        'replay',
        'conflict:fingerprint-mismatch',
        'refusal:fingerprint-mismatch',
        'refusal:idempotency-key-missing',
        'refusal:forbidden',
      ]);
    });

    it('keeps answers as long as the route decides for each tenant, over the configuration tombstone period', async () => {
      const keys = { a: newKey(), b: newKey() };
      expect((await post({ ref: keys.a, sku: 'A' }, 'token-a')).status).toBe(201);
      expect((await post({ ref: keys.b, sku: 'A' }, 'token-b')).status).toBe(201);
      expect((await t.post({ key: keys.a, body: { sku: 'A' } })).status).toBe(201);
      const periods = async (tenant: string, key: string, operation: string) => {
        const { rows } = await t.database.query<{ response: number; tombstone: number }>(
          `SELECT extract(epoch FROM response_expires_at - finished_at)::int AS response, extract(epoch FROM expires_at - finished_at)::int AS tombstone
             FROM retrysafe_operations WHERE tenant = $1 AND key = $2 AND operation = $3`,
          [tenant, key, operation],
        );
        return rows[0];
      };
      expect(await periods('tenant-a', keys.a, 'imports.create@1')).toEqual({
        response: importsRetention('tenant-a').responseSeconds,
        tombstone: 86_400,
      });
      expect(await periods('tenant-b', keys.b, 'imports.create@1')).toEqual({
        response: importsRetention('tenant-b').responseSeconds,
        tombstone: 86_400,
      });
      // Another route keeps the configuration's defaults.
      expect(await periods('tenant-a', keys.a, 'orders.create@1')).toEqual({ response: 24 * 3600, tombstone: 86_400 });
    });
  });
});

describe.each(engines)('a policy for every route on $name', (engine) => {
  const ref = useEngine(engine);
  describe.each(adapters)('through $name', (adapter) => {
    const t = useApp(ref, adapter, { describedBy: '/docs/idempotency' });

    it('links the configuration policy from every route without its own', async () => {
      const missing = await t.post({ body: { sku: 'A' } });
      expectProblem(missing, 'idempotency-key-missing', 400);
      expect(missing.headers.link).toBe('</docs/idempotency>; rel="describedby"');
      expect((await t.post({ body: { sku: 'A' } }, '/imports')).headers.link).toBe(LINK);
    });
  });
});
