import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { idempotentFetch } from '../../src/client/index.js';
import { type ScriptedServer, startScriptedServer } from './scripted-server.js';

const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const post = { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"sku":"WIDGET"}' };
const quick = { baseDelayMs: 10, maxDelayMs: 50 };

describe('the idempotency key', () => {
  let server: ScriptedServer;
  beforeAll(async () => {
    // 503 to the first request of each call, then 201.
    server = await startScriptedServer((_request, index) => ({ status: index % 2 === 0 ? 503 : 201 }));
  });
  beforeEach(() => server.clear());
  afterAll(() => server.close());

  it('uses a caller-supplied key as is, on every attempt, in bare token form', async () => {
    const result = await idempotentFetch(`${server.url}/orders`, {
      ...post,
      idempotencyKey: 'checkout-8812:v1',
      retry: quick,
    });

    expect(result).toMatchObject({ attempts: 2, idempotencyKey: 'checkout-8812:v1' });
    expect(server.requests.map((r) => r.key)).toEqual(['checkout-8812:v1', 'checkout-8812:v1']);
  });

  it('uses a key the caller put in the headers as is', async () => {
    const result = await idempotentFetch(`${server.url}/orders`, {
      ...post,
      headers: { ...post.headers, 'Idempotency-Key': '"sf-string-form"' },
      retry: quick,
    });

    expect(result.idempotencyKey).toBe('"sf-string-form"');
    expect(server.requests.map((r) => r.key)).toEqual(['"sf-string-form"', '"sf-string-form"']);
  });

  it('creates one new key per call: the same on every retry, different for the next call', async () => {
    const first = await idempotentFetch(`${server.url}/orders`, { ...post, retry: quick });
    const second = await idempotentFetch(`${server.url}/orders`, { ...post, retry: quick });

    expect(first.idempotencyKey).toMatch(uuid);
    expect(second.idempotencyKey).toMatch(uuid);
    expect(second.idempotencyKey).not.toBe(first.idempotencyKey);
    expect(server.requests.map((r) => r.key)).toEqual([
      first.idempotencyKey,
      first.idempotencyKey,
      second.idempotencyKey,
      second.idempotencyKey,
    ]);
  });

  it('gives PATCH a key too', async () => {
    const result = await idempotentFetch(`${server.url}/orders/1`, { ...post, method: 'PATCH', retry: quick });
    expect(result.idempotencyKey).toMatch(uuid);
    expect(server.requests.map((r) => r.key)).toEqual([result.idempotencyKey, result.idempotencyKey]);
  });

  it.each(['GET', 'HEAD', 'PUT', 'DELETE', 'OPTIONS'])(
    'retries %s, which is idempotent by definition, without a key',
    async (method) => {
      const result = await idempotentFetch(`${server.url}/orders/1`, { method, retry: quick });

      expect(result).toMatchObject({ attempts: 2, idempotencyKey: undefined });
      expect(server.requests.map((r) => [r.method, r.key])).toEqual([
        [method, undefined],
        [method, undefined],
      ]);
    },
  );

  it('sends another method once, without a key', async () => {
    const result = await idempotentFetch(`${server.url}/orders/1`, { method: 'PURGE', retry: quick });

    expect(result).toMatchObject({ attempts: 1, idempotencyKey: undefined, gaveUp: 'attempts-exhausted' });
    expect(result.response.status).toBe(503);
    expect(server.requests).toHaveLength(1);
  });

  it('retries another method when the caller supplies a key, vouching the server deduplicates it', async () => {
    const result = await idempotentFetch(`${server.url}/orders/1`, {
      method: 'PURGE',
      idempotencyKey: 'purge-1',
      retry: quick,
    });
    expect(result).toMatchObject({ attempts: 2, idempotencyKey: 'purge-1' });
  });

  it('refuses an unusable key before sending anything', async () => {
    const error = await idempotentFetch(`${server.url}/orders`, { ...post, idempotencyKey: 'two words' }).catch(
      (e: unknown) => e,
    );
    expect(error).toMatchObject({ name: 'IdempotentFetchError', code: 'invalid-options', attempts: 0 });
    expect(server.requests).toHaveLength(0);
  });
});
