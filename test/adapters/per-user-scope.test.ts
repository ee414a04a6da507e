import { describe, expect, it } from 'vitest';
import { adapters } from '../support/apps.js';
import { engines } from '../support/engines.js';
import { expectNothingOf, expectProblem, expectReplayOf, newKey, readChoices, useApp, useEngine } from './harness.js';

const body = { sku: 'A', qty: 1 };

/** Every way an atomic route answers from an existing record: a read first, the claim, and the in-memory replay cache. */
const answeringPaths = [...readChoices, { readBeforeClaim: 'always', replayCache: true }] as const;

describe.each(engines)('whose key it is, on $name', (engine) => {
  const ref = useEngine(engine);

  describe.each(answeringPaths)('reading before the claim: $readBeforeClaim, replay cache: $replayCache', (options) => {
    describe.each(adapters)('through $name', (adapter) => {
      const t = useApp(ref, adapter, options);

      it("refuses another user of the same tenant who sends the first user's key, without the stored body or a run", async () => {
        const key = newKey();
        const first = await t.post({ key, token: 'token-a', body });
        expect(first.status).toBe(201);
        // Twice: the first retry may be answered by the claim, the second by a read or the cache.
        for (const again of [body, body, { sku: 'B', qty: 2 }]) {
          const other = await t.post({ key, token: 'token-a2', body: again });
          expectProblem(other, 'key-of-another-principal', 403);
          expect(other.headers['idempotent-replayed']).toBeUndefined();
          expectNothingOf(other, first);
        }
        expect(t.calls()).toBe(1);
        expect(await t.orders()).toBe(1);
        // The refusals stored nothing: the first user's retry still replays.
        expectReplayOf(await t.post({ key, token: 'token-a', body }), first);
        expect(t.calls()).toBe(1);
      });

      it('stores a digest of the user with the record, never the user', async () => {
        const key = newKey();
        expect((await t.post({ key, token: 'token-a', body })).status).toBe(201);
        const { rows } = await t.database.query<{ principal: Uint8Array | null; row: string }>(
          'SELECT principal, o::text AS row FROM retrysafe_operations AS o WHERE key = $1',
          [key],
        );
        expect(rows[0]?.principal?.byteLength).toBe(32);
        expect(rows[0]?.row).not.toContain('user-1');
      });

      it('answers 401 to a caller of a known tenant who names no user, before the key is looked at', async () => {
        const key = newKey();
        expectProblem(await t.post({ key, token: 'token-a-service', body }), 'unauthenticated', 401);
        expectProblem(await t.post({ token: 'token-a-service', body }), 'unauthenticated', 401);
        expect(t.calls()).toBe(0);
        expect(await t.records()).toBe(0);
        const first = await t.post({ key, token: 'token-a', body });
        const anonymous = await t.post({ key, token: 'token-a-service', body });
        expectProblem(anonymous, 'unauthenticated', 401);
        expectNothingOf(anonymous, first);
        expect(t.calls()).toBe(1);
      });

      it('replays a record stored without a user, as written before per-user scoping', async () => {
        const key = newKey();
        const first = await t.post({ key, token: 'token-a', body });
        expect(first.status).toBe(201);
        await t.database.query('UPDATE retrysafe_operations SET principal = NULL WHERE key = $1', [key]);
        // With the replay cache on, the record it kept at the commit answers instead; either way the retry replays.
        expectReplayOf(await t.post({ key, token: 'token-a', body }), first);
        expect(t.calls()).toBe(1);
      });
    });
  });
});
