import { describe, expect, it } from 'vitest';
import { isKeyReuse, isReplayed, namesResource, retryAfterMs, type Answer } from '../../src/check/answer.js';
import { deriveOtherBody, fillTemplate } from '../../src/check/body-template.js';
import { planCheck } from '../../src/check/check-options.js';
import { isCheckError } from '../../src/check/index.js';
import { countResources } from '../../src/check/resource-count.js';

const answer = (headers: Record<string, string>, body = ''): Answer => ({
  status: 201,
  headers,
  body: Buffer.from(body),
});

describe('the count rule', () => {
  it('counts a top-level array, or the first array-valued member of an object', () => {
    expect(countResources([1, 2, 3])).toBe(3);
    expect(countResources({ next: null, orders: [{}, {}], other: [1] })).toBe(2);
    expect(countResources({ total: 2 })).toBeUndefined();
    expect(countResources('2')).toBeUndefined();
  });
});

describe('the body template', () => {
  it('replaces every {{uuid}} with the same value', () => {
    expect(fillTemplate('{"a":"{{uuid}}","b":"x-{{uuid}}"}', 'u1')).toBe('{"a":"u1","b":"x-u1"}');
  });

  it('derives a different body by changing the first number, keeping member order', () => {
    expect(deriveOtherBody('{"cart_id":"c1","cart_version":7,"qty":1}')).toEqual({
      kind: 'derived',
      body: '{"cart_id":"c1","cart_version":8,"qty":1}',
      change: 'cart_version changed from 7 to 8',
    });
  });

  it('adds a marker member when there is no number, and gives up on anything but an object', () => {
    const derived = deriveOtherBody('{"sku":"w"}');
    const body = derived.kind === 'derived' ? (JSON.parse(derived.body) as Record<string, unknown>) : {};
    expect(Object.keys(body)).toEqual(['sku', '__retrysafe_check']);
    expect(typeof body.__retrysafe_check).toBe('string');
    expect(deriveOtherBody('[1]').kind).toBe('underivable');
    expect(deriveOtherBody('sku=w').kind).toBe('underivable');
  });
});

describe('reading answers', () => {
  it('reads Retry-After as seconds or as a date', () => {
    expect(retryAfterMs(answer({ 'retry-after': '2' }))).toBe(2000);
    expect(retryAfterMs(answer({ 'retry-after': new Date(10_000).toUTCString() }), 4_000)).toBe(6_000);
    expect(retryAfterMs(answer({}))).toBeUndefined();
  });

  it('takes the replay marker case-insensitively', () => {
    expect(isReplayed(answer({ 'idempotent-replayed': 'True' }))).toBe(true);
    expect(isReplayed(answer({}))).toBe(false);
  });

  it('sees a resource in Location or in an id member, at the top or one level down', () => {
    expect(namesResource(answer({ location: '/orders/1' }))).toBe(true);
    expect(namesResource(answer({}, '{"id":1}'))).toBe(true);
    expect(namesResource(answer({}, '{"order":{"id":1}}'))).toBe(true);
    expect(namesResource(answer({}, '{"ok":true}'))).toBe(false);
  });
});

describe('the options', () => {
  it('fills in the defaults', () => {
    const plan = planCheck({ url: 'http://127.0.0.1:3000/v1/orders', headers: { Authorization: 'Bearer demo-a' } });
    expect(plan).toMatchObject({
      method: 'POST',
      body: '{}',
      concurrency: 32,
      timeoutMs: 10_000,
      otherHeaders: undefined,
    });
    expect(plan.headers).toEqual({ 'content-type': 'application/json', authorization: 'Bearer demo-a' });
  });

  it.each([
    [{ url: 'ftp://example.com/x' }],
    [{ url: 'not a url' }],
    [{ url: 'http://h/x', concurrency: 257 }],
    [{ url: 'http://h/x', timeoutMs: 5_000, deadlineMs: 1_000 }],
    [{ url: 'http://h/x', headers: { 'Idempotency-Key': 'k' } }],
    [{ url: 'http://h/x', headers: { 'X-A': 'a\r\nX-B: b' } }],
    [{ url: 'http://h/x', countUrl: 'mailto:a@b' }],
  ])('refuses %j as invalid options', (options) => {
    let thrown: unknown;
    try {
      planCheck(options);
    } catch (error) {
      thrown = error;
    }
    expect(isCheckError(thrown, 'invalid-options')).toBe(true);
  });
});

describe('a 422 as a refused key', () => {
  const answer = (type: string | undefined, contentType = 'application/problem+json') => ({
    status: 422,
    headers: { 'content-type': contentType },
    body: Buffer.from(JSON.stringify(type === undefined ? { title: 'x' } : { type })),
  });

  it('is a refused key when the problem type says so, or when nothing says otherwise', () => {
    expect(isKeyReuse(answer('https://retrysafe.dev/problems/fingerprint-mismatch'))).toBe(true);
    expect(isKeyReuse(answer('https://api.example/errors/idempotency-key-reused'))).toBe(true);
    expect(isKeyReuse(answer(undefined))).toBe(true);
    expect(isKeyReuse(answer('https://shop.example/cart-not-found', 'application/json'))).toBe(true);
  });

  it('is the operation’s own answer when a problem type names a business rule', () => {
    expect(isKeyReuse(answer('https://retrysafe.dev/examples/orders/problems/cart-not-found'))).toBe(false);
    expect(isKeyReuse({ ...answer('x'), status: 409 })).toBe(false);
  });
});

describe('the expired-key options', () => {
  const refused = (options: Parameters<typeof planCheck>[0]): string | undefined => {
    try {
      planCheck(options);
      return undefined;
    } catch (error) {
      return isCheckError(error) ? error.message : String(error);
    }
  };

  it('takes the key, the body it was first sent with and the documented status, 410 by default', () => {
    expect(planCheck({ url: 'http://x/orders', body: '{"sku":"a"}', expiredKey: 'k1' }).expired).toEqual({
      key: 'k1',
      body: '{"sku":"a"}',
      status: 410,
      headers: undefined,
    });
    expect(planCheck({ url: 'http://x/orders', expiredKey: 'k1', expiredStatus: 201 }).expired?.status).toBe(201);
  });

  it("takes the credentials the key was sent with, checked as the first user's are", () => {
    const plan = planCheck({ url: 'http://x/orders', expiredKey: 'k1', expiredHeaders: { Authorization: 'Bearer c' } });
    expect(plan.expired?.headers).toEqual({ authorization: 'Bearer c', 'content-type': 'application/json' });
    expect(refused({ url: 'http://x/orders', expiredKey: 'k1', expiredHeaders: { Host: 'x' } })).toMatch(
      /expired header "Host" is set by the checker/,
    );
    expect(refused({ url: 'http://x/orders', expiredHeaders: { Authorization: 'Bearer c' } })).toMatch(
      /need the expired key/,
    );
  });

  it('refuses a body it cannot send again, a key that cannot be sent, and settings without a key', () => {
    expect(refused({ url: 'http://x/orders', body: '{"sku":"{{uuid}}"}', expiredKey: 'k1' })).toMatch(
      /holds \{\{uuid\}\}/,
    );
    expect(refused({ url: 'http://x/orders', expiredKey: 'k é' })).toMatch(/visible ASCII/);
    expect(refused({ url: 'http://x/orders', expiredStatus: 410 })).toMatch(/need the expired key/);
    expect(refused({ url: 'http://x/orders', expiredKey: 'k', expiredStatus: 99 })).toMatch(/100 to 599/);
  });
});
