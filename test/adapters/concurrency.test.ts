import { describe, expect, it } from 'vitest';
import { adapters } from '../support/apps.js';
import type { Received } from '../support/http.js';
import { engines } from '../support/engines.js';
import { expectProblem, expectReplayOf, type Harness, newKey, useApp, useEngine } from './harness.js';
import { waitFor } from '../support/wait-for.js';

const N = 50;

/** Fires `N` POSTs with one key at once, each on its own TCP connection. */
function burst(t: Harness, key: string, body: unknown): Promise<Received[]> {
  return Promise.all(Array.from({ length: N }, () => t.post({ key, body })));
}

/**
 * Splits a burst's answers: exactly one original (the handler's own answer) and
 * the rest, each a byte-identical replay of it or a 409 with Retry-After.
 */
function sortOut(answers: readonly Received[]): { original: Received; replays: number; conflicts: number } {
  const originals = answers.filter((a) => a.status === 201 && a.headers['idempotent-replayed'] === undefined);
  expect(originals).toHaveLength(1);
  const original = originals[0] as Received;
  let replays = 0;
  let conflicts = 0;
  for (const answer of answers) {
    if (answer === original) continue;
    if (answer.status === 409) {
      expectProblem(answer, 'operation-in-progress', 409);
      expect(answer.headers['retry-after']).toBe('1');
      conflicts += 1;
    } else {
      expectReplayOf(answer, original);
      replays += 1;
    }
  }
  return { original, replays, conflicts };
}

describe.each(engines)('concurrent duplicates on $name', (engine) => {
  const ref = useEngine(engine);

  describe.each(adapters)('through $name', (adapter) => {
    describe('with the default lock wait (3 s)', () => {
      const t = useApp(ref, adapter);

      it(`${N} concurrent requests with one key make exactly one row; each answer is the original or 409 with Retry-After`, async () => {
        const key = newKey();
        const answers = await burst(t, key, { sku: 'SLOW', qty: 1, delayMs: 500 });
        const { replays, conflicts } = sortOut(answers);
        expect(replays + conflicts).toBe(N - 1);
        expect(await t.orders()).toBe(1);
        expect(t.calls()).toBe(1);
        expect(await t.record(key)).toMatchObject({ state: 'completed', response_status: 201 });
      });
    });

    describe('with a long lock wait (30 s)', () => {
      const t = useApp(ref, adapter, { lockTimeoutMs: 30_000 });

      it(`${N} concurrent requests all get the original answer, and the handler runs once`, async () => {
        const key = newKey();
        const answers = await burst(t, key, { sku: 'SLOW', qty: 1, delayMs: 1000 });
        const { original, replays } = sortOut(answers);
        expect(replays).toBe(N - 1);
        expect(await t.orders()).toBe(1);
        expect(t.calls()).toBe(1);
        expectReplayOf(await t.post({ key, body: { sku: 'SLOW', qty: 1, delayMs: 1000 } }), original);
      });

      it('a first attempt that is slow and then throws lets the waiting duplicate run after the rollback; one row in the end', async () => {
        const key = newKey();
        const body = { sku: 'SLOW-THEN-THROW-ONCE', qty: 1, delayMs: 1000 };
        const first = t.post({ key, body });
        await waitFor(() => t.calls() === 1);
        const duplicate = await t.post({ key, body });
        expect((await first).status).toBe(500);
        expect(duplicate.status).toBe(201);
        expect(duplicate.headers['idempotent-replayed']).toBeUndefined();
        expect(t.calls()).toBe(2);
        expect(t.app.state.errors).toHaveLength(1);
        expect(await t.orders()).toBe(1);
        expectReplayOf(await t.post({ key, body }), duplicate);
        expect(t.calls()).toBe(2);
      });
    });

    describe('with a long lock wait, when the first attempt fails', () => {
      const t = useApp(ref, adapter, { lockTimeoutMs: 30_000 });

      it(`of ${N} concurrent requests whose first attempt throws after its insert, exactly one other runs; one row`, async () => {
        const key = newKey();
        const answers = await burst(t, key, { sku: 'SLOW-THEN-THROW-ONCE', qty: 1, delayMs: 500 });
        const failed = answers.filter((a) => a.status === 500);
        expect(failed).toHaveLength(1);
        const { replays } = sortOut(answers.filter((a) => a.status !== 500));
        expect(replays).toBe(N - 2);
        expect(t.calls()).toBe(2);
        expect(await t.orders()).toBe(1);
      });
    });

    describe('with a short lock wait (200 ms) and a slow handler (2 s)', () => {
      const t = useApp(ref, adapter, { lockTimeoutMs: 200 });

      it('duplicates past the lock wait get 409 operation-in-progress with Retry-After; still one row', async () => {
        const key = newKey();
        const answers = await burst(t, key, { sku: 'SLOW', qty: 1, delayMs: 2000 });
        const { original, conflicts, replays } = sortOut(answers);
        expect(conflicts + replays).toBe(N - 1);
        if (t.concurrent) {
          expect(conflicts).toBeGreaterThanOrEqual(1);
        } else {
          // PGlite runs transactions one after another: a duplicate waits for its turn
          // in the driver and never finds the claim held, so its wait cannot run out and
          // every duplicate replays the original once it commits.
          expect(conflicts).toBe(0);
        }
        expect(await t.orders()).toBe(1);
        expect(t.calls()).toBe(1);
        // A 409 is the library's own answer, never stored: a later retry replays the original.
        expectReplayOf(await t.post({ key, body: { sku: 'SLOW', qty: 1, delayMs: 2000 } }), original);
      });
    });
  });
});
