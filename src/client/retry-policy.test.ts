import { describe, expect, it } from 'vitest';
import { classifyResponse, classifyStatus } from './retry-policy.js';

const inProgressType = 'https://retrysafe.dev/problems/operation-in-progress';

describe('classifyStatus', () => {
  it.each([
    // status, Retry-After, problem type, retried
    [200, null, undefined, false],
    [201, null, undefined, false],
    [204, null, undefined, false],
    [400, null, undefined, false],
    [400, '1', undefined, false],
    [401, null, undefined, false],
    [403, null, undefined, false],
    [404, null, undefined, false],
    [408, null, undefined, false],
    [409, null, undefined, false],
    [409, null, 'https://example.com/problems/sku-taken', false],
    [409, null, 'https://retrysafe.dev/problems/outcome-unknown', false],
    [409, 'soon', undefined, false],
    [409, '1', undefined, true],
    [409, null, inProgressType, true],
    [410, null, undefined, false],
    [422, null, undefined, false],
    [422, '1', undefined, false],
    [425, null, undefined, true],
    [429, null, undefined, true],
    [429, '3', undefined, true],
    [500, null, undefined, false],
    [500, '1', undefined, false],
    [501, null, undefined, false],
    [502, null, undefined, true],
    [503, null, undefined, true],
    [503, '1', undefined, true],
    [504, null, undefined, true],
  ] as const)('%i with Retry-After %j and type %j: retried %s', (status, retryAfter, problemType, retried) => {
    expect(classifyStatus({ status, retryAfter, problemType }).retry).toBe(retried);
  });

  it('carries the wait Retry-After asks for', () => {
    expect(classifyStatus({ status: 503, retryAfter: '2', problemType: undefined })).toEqual({
      retry: true,
      retryAfterMs: 2000,
    });
    expect(classifyStatus({ status: 503, retryAfter: null, problemType: undefined })).toEqual({
      retry: true,
      retryAfterMs: undefined,
    });
  });
});

describe('classifyResponse', () => {
  const problem = (type: string): Response =>
    new Response(JSON.stringify({ type, title: 't', status: 409 }), {
      status: 409,
      headers: { 'content-type': 'application/problem+json' },
    });

  it('reads the problem type of a 409 from a clone, leaving the body for the caller', async () => {
    const response = problem(inProgressType);
    expect((await classifyResponse(response)).retry).toBe(true);
    expect(((await response.json()) as { type: string }).type).toBe(inProgressType);
  });

  it('treats a 409 business conflict as final and leaves its body unread', async () => {
    const response = new Response('{"error":"sku taken"}', {
      status: 409,
      headers: { 'content-type': 'application/json' },
    });
    expect((await classifyResponse(response)).retry).toBe(false);
    expect(await response.text()).toBe('{"error":"sku taken"}');
  });

  it('treats an unreadable problem document as final', async () => {
    const response = new Response('not json', { status: 409, headers: { 'content-type': 'application/problem+json' } });
    expect((await classifyResponse(response)).retry).toBe(false);
  });

  it('does not read the body of other statuses', async () => {
    const response = new Response('x', { status: 503, headers: { 'retry-after': '1' } });
    expect(await classifyResponse(response)).toEqual({ retry: true, retryAfterMs: 1000 });
    expect(response.bodyUsed).toBe(false);
  });
});
