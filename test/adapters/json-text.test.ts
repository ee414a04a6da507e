import { describe, expect, it } from 'vitest';
import { adapters } from '../support/apps.js';
import { engines } from '../support/engines.js';
import { expectProblem, newKey, useApp, useEngine } from './harness.js';

const json = { 'Content-Type': 'application/json' };

/** The contract app's order with `sku` written as these bytes between its quotes. */
function skuOf(...bytes: number[]): Buffer {
  return Buffer.concat([Buffer.from('{"sku":"'), Buffer.from(bytes), Buffer.from('","qty":1}')]);
}

/**
 * What a JSON body's text must be before anything reads it: UTF-8, and each
 * object's member names once. A decoder would put U+FFFD in place of bytes
 * that are not UTF-8, and a parser keeps the last of two members of one name,
 * so two different requests would share a fingerprint (or a proxy reading the
 * first member would see another request). Checked before the store, the same
 * in every adapter set up as documented.
 */
describe.each(engines)("a JSON body's text on $name", (factory) => {
  const ref = useEngine(factory);

  describe.each(adapters)('through $name', (adapter) => {
    const h = useApp(ref, adapter);

    it('refuses bytes that are not UTF-8 with 400 request-body-not-utf8: never decoded alike, nothing claimed or stored', async () => {
      const key = newKey();
      const bodies = [
        skuOf(0xff),
        skuOf(0xfe),
        // "/" written overlong, in two bytes.
        skuOf(0xc0, 0xaf),
        // U+D800, a lone surrogate, encoded as if it were a character.
        skuOf(0xed, 0xa0, 0x80),
        // The first two bytes of the three of "€".
        skuOf(0xe2, 0x82),
        // The first three bytes of the four of "😀".
        skuOf(0xf0, 0x9f, 0x98),
      ];
      for (const body of bodies) {
        const res = await h.post({ key, body, headers: json });
        expectProblem(res, 'request-body-not-utf8', 400);
        expect((res.json as { status?: unknown }).status).toBe(400);
      }
      expect(h.calls()).toBe(0);
      expect(await h.records()).toBe(0);
      expect(await h.orders()).toBe(0);
      // The key was not recorded: the same key with a valid body runs, once.
      expect((await h.post({ key, body: skuOf(0xe2, 0x82, 0xac), headers: json })).status).toBe(201);
      expect((await h.post({ key, body: skuOf(0xe2, 0x82, 0xac), headers: json })).headers['idempotent-replayed']).toBe(
        'true',
      );
      expect(h.calls()).toBe(1);
      expect(await h.orders()).toBe(1);
    });

    it('takes U+FFFD sent as its own UTF-8 bytes as a character like any other', async () => {
      expect((await h.post({ key: newKey(), body: skuOf(0xef, 0xbf, 0xbd), headers: json })).status).toBe(201);
    });

    it('refuses a member name given twice in one object with 400 request-body-duplicate-member, however it is spelt', async () => {
      const key = newKey();
      for (const body of [
        '{"sku":"a","sku":"b"}',
        '{"sku":"a","qty":1,"x":{"a":1,"a":2}}',
        '{"sku":"a","x":[{"a":1,"\\u0061":2}]}',
        '{"sku":"a","s\\u006bu":"b"}',
      ]) {
        expectProblem(await h.post({ key, body, headers: json }), 'request-body-duplicate-member', 400);
      }
      expect(h.calls()).toBe(0);
      expect(await h.records()).toBe(0);
      expect(await h.orders()).toBe(0);
      expect((await h.post({ key, body: '{"sku":"b"}', headers: json })).status).toBe(201);
      expect((await h.post({ key, body: '{"sku":"b"}', headers: json })).headers['idempotent-replayed']).toBe('true');
      expect(h.calls()).toBe(1);
    });

    it('accepts one name in sibling objects, in arrays of objects, and as a value', async () => {
      const body =
        '{"sku":"sku","qty":1,"a":{"n":1},"b":{"n":1,"m":{"n":2}},"items":[{"n":1,"sku":"x"},{"n":2,"sku":"y"}],"n":"n"}';
      expect((await h.post({ key: newKey(), body, headers: json })).status).toBe(201);
      expect(h.calls()).toBe(1);
    });
  });
});
