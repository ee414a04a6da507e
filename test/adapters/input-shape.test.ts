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

    describe('numbers', () => {
      const h = useApp(ref, adapter);
      const post = (key: string, ref: string) => h.post({ key, body: `{"sku":"A","qty":1,"ref":${ref}}`, headers: { 'Content-Type': 'application/json' } });

      it('never lets two integers beyond 2^53 share a fingerprint: each is refused, not replayed', async () => {
        const key = newKey();
        expectProblem(await post(key, '9007199254740992'), 'request-body-number-unsafe', 400);
        expectProblem(await post(key, '9007199254740993'), 'request-body-number-unsafe', 400);
        expectProblem(await post(newKey(), '-9007199254740993'), 'request-body-number-unsafe', 400);
        expectProblem(await post(newKey(), '1e300'), 'request-body-number-unsafe', 400);
        expect(h.calls()).toBe(0);
        expect(await h.records()).toBe(0);
      });

      it('never lets two numbers that differ only beyond double precision share a fingerprint: each inexact one is refused', async () => {
        const key = newKey();
        expect((await post(key, '0.1')).status).toBe(201);
        expectProblem(await post(key, '0.10000000000000000001'), 'request-body-number-unsafe', 400);
        expectProblem(await post(newKey(), '1.0000000000000001'), 'request-body-number-unsafe', 400);
        expectProblem(await post(newKey(), '1e400'), 'request-body-number-unsafe', 400);
        expectProblem(await post(newKey(), '1e401'), 'request-body-number-unsafe', 400);
        expectProblem(await post(newKey(), '-1e400'), 'request-body-number-unsafe', 400);
        expectProblem(await post(newKey(), '1e-400'), 'request-body-number-unsafe', 400);
        expect(h.calls()).toBe(1);
        expect(await h.records()).toBe(1);
      });

      it('takes the same value spelt otherwise as the same number: 1, 1.0, 1e0, 10e-1 and 0.10 replay', async () => {
        const key = newKey();
        const first = await post(key, '1');
        expect(first.status).toBe(201);
        for (const spelling of ['1.0', '1e0', '10e-1', '1.000000000000000000000']) expect((await post(key, spelling)).headers['idempotent-replayed']).toBe('true');
        const tenth = newKey();
        expect((await post(tenth, '0.1')).status).toBe(201);
        expect((await post(tenth, '0.10')).headers['idempotent-replayed']).toBe('true');
        expect((await post(tenth, '1e-1')).headers['idempotent-replayed']).toBe('true');
        expect(h.calls()).toBe(2);
      });

      it('accepts the safe integers, fractions, and big integers sent as strings, which compare exactly', async () => {
        expect((await post(newKey(), '9007199254740991')).status).toBe(201);
        expect((await post(newKey(), '-9007199254740991')).status).toBe(201);
        expect((await post(newKey(), '12.5')).status).toBe(201);
        const key = newKey();
        expect((await post(key, '"9007199254740992"')).status).toBe(201);
        expectProblem(await post(key, '"9007199254740993"'), 'fingerprint-mismatch', 422);
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
