import { describe, expect, it } from 'vitest';
import { adapters } from '../support/apps.js';
import { engines } from '../support/engines.js';
import { expectNothingOf, expectProblem, expectReplayOf, newKey, readChoices, useApp, useEngine } from './harness.js';
import { waitFor } from '../support/wait-for.js';

describe.each(engines)('fingerprints on $name', (engine) => {
  const ref = useEngine(engine);

  describe.each(readChoices)('reading before the claim: $readBeforeClaim', (options) => {
    describe.each(adapters)('through $name', (adapter) => {
      // A lock wait far beyond the slow attempt's 1.5 s, as in the concurrency suite: a commit stalled by a loaded disk still lands within it.
      const t = useApp(ref, adapter, { ...options, lockTimeoutMs: 30_000 });

      it('refuses the same key with a different body: 422, the handler does not run, the record is unchanged', async () => {
        const key = newKey();
        const first = await t.post({ key, body: { sku: 'A', qty: 1 } });
        expect(first.status).toBe(201);
        const before = await t.record(key);

        const other = await t.post({ key, body: { sku: 'A', qty: 2 } });
        expectProblem(other, 'fingerprint-mismatch', 422);
        expect(other.headers['idempotent-replayed']).toBeUndefined();
        expectNothingOf(other, first);
        expect(t.calls()).toBe(1);
        expect(await t.orders()).toBe(1);
        expect(await t.record(key)).toEqual(before);

        // The library's own 422 was not stored as the outcome: the original still replays.
        expectReplayOf(await t.post({ key, body: { sku: 'A', qty: 1 } }), first);
        expect(t.calls()).toBe(1);
      });

      it('refuses the same key on the same route with another path or query', async () => {
        const key = newKey();
        expect((await t.post({ key, body: { sku: 'A', qty: 1 } })).status).toBe(201);
        const other = await t.post({ key, body: { sku: 'A', qty: 1 } }, '/orders?priority=high');
        expectProblem(other, 'fingerprint-mismatch', 422);
        expect(t.calls()).toBe(1);
      });

      it('replays, not 422, when the retry orders the JSON fields differently or spells a number differently', async () => {
        const key = newKey();
        const first = await t.post({ key, body: '{"qty":1,"sku":"A"}' });
        expect(first.status).toBe(201);
        expectReplayOf(await t.post({ key, body: '{"sku":"A","qty":1.0}' }), first);
        expectReplayOf(await t.post({ key, body: '{ "sku" : "\\u0041", "qty" : 1e0 }' }), first);
        expect(t.calls()).toBe(1);
        expect(await t.orders()).toBe(1);
      });

      it('refuses a different body that arrives while the first attempt runs with 422, once the first commits within the lock wait', async () => {
        const key = newKey();
        const slow = t.post({ key, body: { sku: 'SLOW', qty: 1, delayMs: 1500 } });
        await waitFor(() => t.calls() === 1);
        const other = await t.post({ key, body: { sku: 'B', qty: 1 } });
        // PGlite runs one transaction at a time: this one waits for the first to commit, then reads its record.
        expectProblem(other, 'fingerprint-mismatch', 422);
        expect((await slow).status).toBe(201);
        expect(t.calls()).toBe(1);
        expect(await t.orders()).toBe(1);
      });
    });
  });
});
