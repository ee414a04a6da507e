import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { idempotentFetch, isIdempotentFetchError } from '../../src/client/index.js';
import { type ScriptedServer, startScriptedServer } from './scripted-server.js';

const quick = { baseDelayMs: 10, maxDelayMs: 50 };

describe('the request body', () => {
  let server: ScriptedServer;
  beforeAll(async () => {
    // 502 to the first request of each call, then 201.
    server = await startScriptedServer((_request, index) => ({ status: index % 2 === 0 ? 502 : 201 }));
  });
  beforeEach(() => server.clear());
  afterAll(() => server.close());

  const form = new FormData();
  form.append('sku', 'WIDGET');
  form.append('note', new Blob(['gift wrap'], { type: 'text/plain' }), 'note.txt');

  it.each([
    ['a string', '{"sku":"WIDGET"}', 'text/plain;charset=UTF-8'],
    ['a Uint8Array', new TextEncoder().encode('bytes \u00e9'), undefined],
    ['an ArrayBuffer', new TextEncoder().encode('buffer').buffer, undefined],
    [
      'URLSearchParams',
      new URLSearchParams({ sku: 'WIDGET', qty: '2' }),
      'application/x-www-form-urlencoded;charset=UTF-8',
    ],
    ['a Blob', new Blob(['{"sku":"W"}'], { type: 'application/json' }), 'application/json'],
    ['FormData', form, /^multipart\/form-data; boundary=/],
  ] as const)('is %s, sent byte for byte the same on every attempt', async (_name, body, contentType) => {
    const result = await idempotentFetch(`${server.url}/orders`, { method: 'POST', body, retry: quick });

    expect(result.attempts).toBe(2);
    const [first, second] = server.requests;
    expect(first?.body.length).toBeGreaterThan(0);
    expect(second?.body.equals(first?.body ?? Buffer.alloc(0))).toBe(true);
    expect(second?.headers['content-type']).toBe(first?.headers['content-type']);
    if (contentType !== undefined) expect(first?.headers['content-type']).toMatch(contentType);
  });

  it('can come from a Request, read once', async () => {
    const request = new Request(`${server.url}/orders`, {
      method: 'POST',
      body: 'from a request',
      headers: { 'x-trace': 'abc' },
    });
    const result = await idempotentFetch(request, { retry: quick });

    expect(result.attempts).toBe(2);
    expect(server.requests.map((r) => [r.body.toString(), r.headers['x-trace']])).toEqual([
      ['from a request', 'abc'],
      ['from a request', 'abc'],
    ]);
  });

  it('refuses a stream before sending anything', async () => {
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new TextEncoder().encode('streamed'));
        controller.close();
      },
    });
    const error = await idempotentFetch(`${server.url}/orders`, {
      method: 'POST',
      body: stream,
      idempotencyKey: 'k-1',
    }).catch((e: unknown) => e);

    expect(isIdempotentFetchError(error, 'body-not-replayable')).toBe(true);
    expect(error).toMatchObject({ attempts: 0, idempotencyKey: 'k-1' });
    expect(server.requests).toHaveLength(0);
  });
});
