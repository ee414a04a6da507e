import { describe, expect, it } from 'vitest';
import { adapters } from '../support/apps.js';
import { engines } from '../support/engines.js';
import { expectProblem, newKey, useApp, useEngine } from './harness.js';

/** A body nested `depth` levels deep: an object (1) holding `depth - 1` arrays. */
function nested(depth: number): string {
  return `{"sku":"A","qty":1,"n":${'['.repeat(depth - 1)}${']'.repeat(depth - 1)}}`;
}

/**
 * The nesting limit is retrysafe's, checked on the parsed body before
 * anything else reads it, so every adapter answers the same. The check is
 * made before the store: one engine is enough.
 */
describe.each(engines.slice(0, 1))('the input nesting limit on $name', (factory) => {
  const ref = useEngine(factory);

  describe.each(adapters)('through $name', (adapter) => {
    describe('by default', () => {
      const h = useApp(ref, adapter);
      it('refuses 5,000 levels with 400 request-body-too-deep; nothing runs, nothing is stored', async () => {
        const res = await h.post({ key: newKey(), body: nested(5_000), headers: { 'Content-Type': 'application/json' } });
        expectProblem(res, 'request-body-too-deep', 400);
        expect(h.calls()).toBe(0);
        expect(await h.records()).toBe(0);
      });
      it('accepts 64 levels, the default limit', async () => {
        expect((await h.post({ key: newKey(), body: nested(64), headers: { 'Content-Type': 'application/json' } })).status).toBe(201);
      });
    });

    describe('with maxInputDepth: 10', () => {
      const h = useApp(ref, adapter, { maxInputDepth: 10 });
      it('accepts 10 levels and refuses 11, keyed or not', async () => {
        expect((await h.post({ key: newKey(), body: nested(10), headers: { 'Content-Type': 'application/json' } })).status).toBe(201);
        expectProblem(await h.post({ key: newKey(), body: nested(11), headers: { 'Content-Type': 'application/json' } }), 'request-body-too-deep', 400);
        expectProblem(await h.send('PUT', '/orders', { body: nested(11), headers: { 'Content-Type': 'application/json' } }), 'request-body-too-deep', 400);
        expect(h.calls()).toBe(1);
      });
    });
  });
});
