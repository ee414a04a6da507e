import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isRetrysafeError } from './errors.js';
import { defaultPolicy, isStoredStatus, resolvePolicy, storedPart } from './storage-policy.js';
import type { Reply } from './answer/reply.js';

function reply(headers: Record<string, string>, status = 201): Reply {
  return { status, headers, body: Buffer.from('{"id":1}') };
}

function misuseFrom(run: () => unknown): string {
  try {
    run();
  } catch (error) {
    expect(isRetrysafeError(error, 'misuse')).toBe(true);
    return (error as Error).message;
  }
  throw new Error('expected a misuse error');
}

describe('stored headers', () => {
  it('are content-type, location, etag and last-modified by default', () => {
    expect([...defaultPolicy.storedHeaders].sort()).toEqual(['content-type', 'etag', 'last-modified', 'location']);
    expect(resolvePolicy()).toEqual(defaultPolicy);
    expect(resolvePolicy({})).toEqual(defaultPolicy);
  });

  it('are lower-cased when configured', () => {
    expect(resolvePolicy({ storedHeaders: ['Content-Type', 'X-Request-Cost'] }).storedHeaders).toEqual([
      'content-type',
      'x-request-cost',
    ]);
  });

  it.each([
    'set-cookie',
    'Set-Cookie',
    'authorization',
    'AUTHORIZATION',
    'proxy-authorization',
    'cookie',
    'www-authenticate',
  ])('can never include %s', (name) => {
    const message = misuseFrom(() => resolvePolicy({ storedHeaders: ['content-type', name] }));
    expect(message).toContain(name.toLowerCase());
  });

  it('names every forbidden header in one error', () => {
    const message = misuseFrom(() => resolvePolicy({ storedHeaders: ['Set-Cookie', 'location', 'Authorization'] }));
    expect(message).toContain('set-cookie');
    expect(message).toContain('authorization');
  });
});

describe('storedPart', () => {
  it('keeps only the stored headers, with status and body', () => {
    const full = reply({
      'content-type': 'application/json',
      location: '/orders/1',
      etag: '"v1"',
      'last-modified': 'Wed, 01 Jan 2025 00:00:00 GMT',
      'set-cookie': 'session=secret',
      'x-request-id': 'abc',
      'cache-control': 'no-store',
    });
    const stored = storedPart(full, defaultPolicy);
    expect(stored.status).toBe(201);
    expect(stored.body).toBe(full.body);
    expect(stored.headers).toEqual({
      'content-type': 'application/json',
      location: '/orders/1',
      etag: '"v1"',
      'last-modified': 'Wed, 01 Jan 2025 00:00:00 GMT',
    });
  });

  it('leaves out stored headers the reply does not have', () => {
    expect(storedPart(reply({ 'content-type': 'text/plain' }), defaultPolicy).headers).toEqual({
      'content-type': 'text/plain',
    });
    expect(storedPart(reply({}), defaultPolicy).headers).toEqual({});
  });

  it('follows a configured list', () => {
    const policy = resolvePolicy({ storedHeaders: ['X-Request-Cost'] });
    expect(storedPart(reply({ 'content-type': 'application/json', 'x-request-cost': '3' }), policy).headers).toEqual({
      'x-request-cost': '3',
    });
  });

  it('never keeps set-cookie or authorization, whatever else the reply holds', () => {
    fc.assert(
      fc.property(
        fc.dictionary(
          fc.string().map((s) => s.toLowerCase()),
          fc.string(),
        ),
        (extra) => {
          const stored = storedPart(reply({ ...extra, 'set-cookie': 'a=b', authorization: 'Bearer x' }), defaultPolicy);
          for (const name of Object.keys(stored.headers)) expect(defaultPolicy.storedHeaders).toContain(name);
        },
      ),
    );
  });

  it('does not change the reply it is given', () => {
    const full = reply({ 'content-type': 'application/json', 'x-other': '1' });
    storedPart(full, defaultPolicy);
    expect(full.headers).toEqual({ 'content-type': 'application/json', 'x-other': '1' });
  });
});

describe('isStoredStatus', () => {
  it('stores 2xx, 3xx and business 4xx answers', () => {
    for (const status of [200, 201, 202, 204, 299, 301, 303, 304, 399, 400, 401, 402, 403, 404, 410, 412, 422, 499]) {
      expect(isStoredStatus(status, defaultPolicy), String(status)).toBe(true);
    }
  });

  it('never stores 408, 409, 425 or 429', () => {
    for (const status of [408, 409, 425, 429])
      expect(isStoredStatus(status, defaultPolicy), String(status)).toBe(false);
  });

  it('never stores a 5xx', () => {
    for (let status = 500; status <= 599; status++)
      expect(isStoredStatus(status, defaultPolicy), String(status)).toBe(false);
  });

  it('stores every 200..499 except the transient four', () => {
    fc.assert(
      fc.property(fc.integer({ min: 200, max: 499 }), (status) => {
        expect(isStoredStatus(status, defaultPolicy)).toBe(![408, 409, 425, 429].includes(status));
      }),
    );
  });

  it('follows configured transient statuses, and still never stores a 5xx', () => {
    const policy = resolvePolicy({ transientStatuses: [423] });
    expect(isStoredStatus(423, policy)).toBe(false);
    expect(isStoredStatus(409, policy)).toBe(true);
    expect(isStoredStatus(503, resolvePolicy({ transientStatuses: [] }))).toBe(false);
  });
});
