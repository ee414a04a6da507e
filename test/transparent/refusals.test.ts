import { describe, expect, it } from 'vitest';
import { engines } from '../support/engines.js';
import { expectProblem, newKey, useEngine } from '../adapters/harness.js';
import { useShop } from './harness.js';
import { gate } from '../support/gate.js';
import { frameworks } from './shop.js';
import { waitFor } from '../support/wait-for.js';

describe.each(engines)('transparent refusals on $name', (factory) => {
  const ref = useEngine(factory);

  describe.each(frameworks)('through $name', (framework) => {
    const shop = useShop(ref, framework);

    it('answers a reused key with a different body 422, without running the route or storing the refusal', async () => {
      const key = newKey();
      expect((await shop.post(key, { sku: 'A' })).status).toBe(201);
      const stored = await shop.record(key);
      const mismatch = await shop.post(key, { sku: 'B' });
      expectProblem(mismatch, 'fingerprint-mismatch', 422);
      expect(shop.runs(key)).toBe(1);
      expect(await shop.orders()).toBe(1);
      expect(await shop.record(key)).toEqual(stored);
    });

    it('answers a duplicate 409 with the lease time left, and another body 422, while the first still runs; neither is stored', async () => {
      const key = newKey();
      shop.state.gate = gate();
      const first = shop.post(key, { sku: 'HANG' });
      await waitFor(async () => shop.runs(key) === 1 && (await shop.record(key))?.state === 'in_progress');
      const running = await shop.record(key);
      expect(running).toMatchObject({ mode: 'transparent', attempt: 1, response_status: null });
      expect(running?.owner_token).not.toBeNull();

      const duplicate = await shop.post(key, { sku: 'HANG' });
      expectProblem(duplicate, 'operation-in-progress', 409);
      // The lease lasts 60 s: Retry-After says how much of it is left, not the 1 s default.
      expect(Number(duplicate.headers['retry-after'])).toBeGreaterThan(30);
      expectProblem(await shop.post(key, { sku: 'OTHER' }), 'fingerprint-mismatch', 422);
      expect(await shop.record(key)).toEqual(running);
      expect(shop.runs(key)).toBe(1);

      shop.state.gate.open();
      expect((await first).status).toBe(201);
      expect((await shop.record(key))?.state).toBe('completed');
      const replay = await shop.post(key, { sku: 'HANG' });
      expect(replay.status).toBe(201);
      expect(replay.headers['idempotent-replayed']).toBe('true');
      expect(shop.runs(key)).toBe(1);
      expect(await shop.orders()).toBe(1);
    });

    it('refuses a number beyond double precision with 400, never replaying the answer of one it rounds to', async () => {
      const key = newKey();
      expect((await shop.post(key, '{"sku":"A","ref":0.1}')).status).toBe(201);
      expectProblem(
        await shop.post(key, '{"sku":"A","ref":0.10000000000000000001}'),
        'request-body-number-unsafe',
        400,
      );
      expect(shop.runs(key)).toBe(1);
      expect(await shop.orders()).toBe(1);
    });

    it('answers 401 before touching the store when the caller is not authenticated', async () => {
      const key = newKey();
      expectProblem(await shop.post(key, { sku: 'A' }, 'token-unknown'), 'unauthenticated', 401);
      expect(shop.runs(key)).toBe(0);
      expect(await shop.record(key)).toBeUndefined();
    });

    it("refuses another user of the same tenant who sends the first user's key, while it runs and once it is stored", async () => {
      const key = newKey();
      shop.state.gate = gate();
      const first = shop.post(key, { sku: 'HANG' });
      await waitFor(async () => shop.runs(key) === 1 && (await shop.record(key))?.state === 'in_progress');
      expectProblem(await shop.post(key, { sku: 'HANG' }, 'token-a2'), 'key-of-another-principal', 403);
      shop.state.gate.open();
      const stored = await first;
      expect(stored.status).toBe(201);
      const record = await shop.record(key);
      const other = await shop.post(key, { sku: 'HANG' }, 'token-a2');
      expectProblem(other, 'key-of-another-principal', 403);
      expect(other.bodyBytes.toString('latin1')).not.toContain(stored.bodyBytes.toString('latin1'));
      expect(other.headers.location).toBeUndefined();
      expect(shop.runs(key)).toBe(1);
      expect(await shop.orders()).toBe(1);
      expect(await shop.record(key)).toEqual(record);
      const replay = await shop.post(key, { sku: 'HANG' });
      expect(replay.headers['idempotent-replayed']).toBe('true');
      expect(replay.bodyBytes.toString('latin1')).toBe(stored.bodyBytes.toString('latin1'));
    });
  });
});
