import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { isRetrysafeError } from '../errors.js';
import { problem, problemCatalogue } from './problems.js';
import { problemReply, REPLAYED_HEADER, replayed, toReply } from './reply.js';

const text = (body: Uint8Array): string => Buffer.from(body).toString('utf8');

describe('toReply', () => {
  it.each([
    [
      'a web ReadableStream',
      () => new ReadableStream({ start: (c) => c.enqueue(new TextEncoder().encode('data: 1\n\n')) }),
    ],
    ['a Node Readable', () => Readable.from(['data: 1\n\n'])],
    ['an async iterable', () => ({ [Symbol.asyncIterator]: () => ['data: 1\n\n'].values() })],
    ['a Blob', () => new Blob(['data: 1\n\n'])],
  ])('refuses %s as a body: a stream can be neither stored nor replayed', (_name, body) => {
    let thrown: unknown;
    try {
      toReply({ status: 200, headers: { 'content-type': 'text/event-stream' }, body: body() });
    } catch (error) {
      thrown = error;
    }
    expect(isRetrysafeError(thrown, 'misuse')).toBe(true);
    expect(String(thrown)).toMatch(/answered with a stream/);
  });

  it('serialises a JSON body once, with a JSON content type', () => {
    let calls = 0;
    const order = { id: 7, toJSON: () => (calls++, { id: 7, total: '9.50' }) };
    const reply = toReply({ status: 201, body: order });
    expect(calls).toBe(1);
    expect(reply.status).toBe(201);
    expect(text(reply.body)).toBe('{"id":7,"total":"9.50"}');
    expect(reply.headers['content-type']).toBe('application/json; charset=utf-8');
  });

  it('sends JSON scalars and arrays as JSON', () => {
    expect(text(toReply({ status: 200, body: [1, 'a'] }).body)).toBe('[1,"a"]');
    expect(text(toReply({ status: 200, body: 0 }).body)).toBe('0');
    expect(text(toReply({ status: 200, body: false }).body)).toBe('false');
  });

  it('sends a string as UTF-8 text', () => {
    const reply = toReply({ status: 200, body: 'café ✓' });
    expect(Buffer.from(reply.body).equals(Buffer.from('café ✓', 'utf8'))).toBe(true);
    expect(reply.headers['content-type']).toBe('text/plain; charset=utf-8');
  });

  it('does not JSON-encode a string body', () => {
    expect(text(toReply({ status: 200, body: '"quoted"' }).body)).toBe('"quoted"');
  });

  it('sends bytes as they are, without a content type of its own', () => {
    const bytes = new Uint8Array([0, 1, 254, 255]);
    const reply = toReply({ status: 200, body: bytes });
    expect(reply.body).toBe(bytes);
    expect(reply.headers).toEqual({});
    const buffer = Buffer.from('raw');
    expect(toReply({ status: 200, body: buffer }).body).toBe(buffer);
  });

  it('sends no body for undefined or null', () => {
    for (const body of [undefined, null]) {
      const reply = toReply({ status: 204, body });
      expect(reply.body).toHaveLength(0);
      expect(reply.headers).toEqual({});
    }
  });

  it("keeps the handler's content type", () => {
    expect(toReply({ status: 200, headers: { 'Content-Type': 'text/csv' }, body: 'a,b' }).headers['content-type']).toBe(
      'text/csv',
    );
    expect(
      toReply({ status: 200, headers: { 'content-type': 'application/vnd.api+json' }, body: { a: 1 } }).headers[
        'content-type'
      ],
    ).toBe('application/vnd.api+json');
  });

  it('lower-cases header names and keeps values as they are', () => {
    const reply = toReply({
      status: 201,
      headers: { Location: '/Orders/1', ETag: '"AbC"', 'X-Custom-Header': 'Value' },
    });
    expect(reply.headers).toEqual({ location: '/Orders/1', etag: '"AbC"', 'x-custom-header': 'Value' });
  });

  it('does not change the answer it is given', () => {
    const headers = { Location: '/orders/1' };
    toReply({ status: 201, headers, body: 'x' });
    expect(headers).toEqual({ Location: '/orders/1' });
  });

  it.each([100, 101, 199, 600, 999, 0, -200, 200.5, Number.NaN])('rejects status %s', (status) => {
    expect(() => toReply({ status })).toThrow(RangeError);
  });

  it.each([200, 299, 302, 404, 500, 599])('accepts status %s', (status) => {
    expect(toReply({ status }).status).toBe(status);
  });
});

describe('problemReply', () => {
  it('is an RFC 9457 document with type, title, status and detail, and what the client may do', () => {
    const reply = problemReply(problem('fingerprint-mismatch', 'Use a new key.'));
    expect(reply.status).toBe(422);
    expect(reply.headers).toEqual({ 'content-type': 'application/problem+json' });
    expect(JSON.parse(text(reply.body))).toEqual({
      type: 'https://retrysafe.dev/problems/fingerprint-mismatch',
      title: problemCatalogue['fingerprint-mismatch'].title,
      status: 422,
      detail: 'Use a new key.',
      applied: 'no',
      retry: 'new-key',
    });
  });

  it('takes status and title from the catalogue for every code', () => {
    for (const [code, { status, title, applied, retry }] of Object.entries(problemCatalogue)) {
      const reply = problemReply(problem(code as keyof typeof problemCatalogue, 'd'));
      expect(reply.status).toBe(status);
      expect(JSON.parse(text(reply.body))).toMatchObject({
        type: `https://retrysafe.dev/problems/${code}`,
        title,
        status,
        applied,
        retry,
      });
    }
  });

  it('uses a configured base for type', () => {
    const body = JSON.parse(text(problemReply(problem('forbidden', 'd'), 'https://api.example.com/errors/').body)) as {
      type: string;
    };
    expect(body.type).toBe('https://api.example.com/errors/forbidden');
  });

  it('sends Retry-After when the problem has one', () => {
    expect(problemReply(problem('operation-in-progress', 'd', { retryAfter: 3 })).headers['retry-after']).toBe('3');
    expect(problemReply(problem('operation-in-progress', 'd')).headers).not.toHaveProperty('retry-after');
  });

  it('sends Location and a resource member when the problem points to a resource', () => {
    const reply = problemReply(problem('response-expired', 'd', { resource: '/orders/42' }));
    expect(reply.status).toBe(410);
    expect(reply.headers.location).toBe('/orders/42');
    expect(JSON.parse(text(reply.body))).toMatchObject({ resource: '/orders/42' });
    const without = problemReply(problem('response-expired', 'd'));
    expect(without.headers).not.toHaveProperty('location');
    expect(JSON.parse(text(without.body))).not.toHaveProperty('resource');
  });
});

describe('replayed', () => {
  it('adds idempotent-replayed: true and keeps the rest', () => {
    const original = toReply({ status: 201, headers: { Location: '/orders/1' }, body: { id: 1 } });
    const again = replayed(original);
    expect(REPLAYED_HEADER).toBe('idempotent-replayed');
    expect(again.headers).toEqual({ ...original.headers, 'idempotent-replayed': 'true' });
    expect(again.status).toBe(201);
    expect(again.body).toBe(original.body);
  });

  it('makes the replayed form of a reply once: a record kept in memory is not copied again on each replay', () => {
    const original = toReply({ status: 201, headers: { Location: '/orders/1' }, body: { id: 1 } });
    const first = replayed(original);
    expect(replayed(original)).toBe(first);
    expect(Object.isFrozen(first) && Object.isFrozen(first.headers)).toBe(true);
    expect(replayed(toReply({ status: 201, headers: { Location: '/orders/1' }, body: { id: 1 } }))).not.toBe(first);
  });

  it('does not change the stored reply', () => {
    const original = toReply({ status: 200, body: 'x' });
    replayed(original);
    expect(original.headers).not.toHaveProperty('idempotent-replayed');
  });
});
