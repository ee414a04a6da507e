import { describe, expect, it } from 'vitest';
import { bounded, ERROR_CHAIN_MAX_CHARS, errorChain } from './error-chain.js';

/** An error as Node's sockets make one: an empty message is possible, the code is always there. */
function socketError(message: string, code: string): Error {
  return Object.assign(new Error(message), { code });
}

describe('errorChain', () => {
  it("follows the causes: fetch's wrapper and the socket error under it", () => {
    const error = new TypeError('fetch failed', {
      cause: socketError('connect ECONNREFUSED 127.0.0.1:4010', 'ECONNREFUSED'),
    });
    expect(errorChain(error)).toBe('TypeError: fetch failed: connect ECONNREFUSED 127.0.0.1:4010');
  });

  it('names every error of an AggregateError, as a host with several addresses fails, and its code when it has no message', () => {
    const both = new AggregateError(
      [
        socketError('connect ECONNREFUSED ::1:4010', 'ECONNREFUSED'),
        socketError('connect ECONNREFUSED 127.0.0.1:4010', 'ECONNREFUSED'),
      ],
      '',
    );
    expect(errorChain(new TypeError('fetch failed', { cause: both }))).toBe(
      'TypeError: fetch failed: connect ECONNREFUSED ::1:4010; connect ECONNREFUSED 127.0.0.1:4010',
    );
    expect(errorChain(new Error('lookup failed', { cause: socketError('', 'ENOTFOUND') }))).toBe(
      'Error: lookup failed: ENOTFOUND',
    );
  });

  it('keeps what is not an Error, and one line of each message', () => {
    expect(errorChain('plain text')).toBe('plain text');
    expect(errorChain(undefined)).toBe('undefined');
    expect(errorChain(new Error('two\n  lines.', { cause: 42 }))).toBe('Error: two lines: 42');
  });

  it('stops at a depth, so a cycle of causes ends', () => {
    const first = new Error('first');
    const second = new Error('second', { cause: first });
    first.cause = second;
    const text = errorChain(first);
    expect(text.startsWith('Error: first: second: first: second')).toBe(true);
    expect(text.endsWith('…')).toBe(true);
    expect(text.length).toBeLessThan(100);
  });

  it(`is at most ${ERROR_CHAIN_MAX_CHARS} characters, cut with an ellipsis`, () => {
    const text = errorChain(new Error('x'.repeat(5000), { cause: new Error('y'.repeat(5000)) }));
    expect(text).toHaveLength(ERROR_CHAIN_MAX_CHARS);
    expect(text.endsWith('…')).toBe(true);
    expect(bounded('short', 10)).toBe('short');
    expect(bounded('0123456789ab', 10)).toBe('012345678…');
  });

  it('strips credentials: URL user info, token-like query values, Authorization and Bearer values, passwords', () => {
    const text = errorChain(
      new Error('request to https://alice:hunter2@api.example.com/v1/charges?access_token=tok_live_123&page=2 failed', {
        cause: new AggregateError(
          [
            new Error('upstream said: Authorization: Bearer eyJhbGciOi.payload.sig rejected'),
            new Error('header authorization=Basic YWxpY2U6aHVudGVyMg== refused'),
            new Error('could not connect with host=db.internal user=app password=s3cr3t dbname=orders'),
            new Error('postgres://app:p%40ss@db.internal:5432/orders?sslmode=require&api_key=k-999 timed out'),
            new Error("x-api-key: sk_live_abc was refused; password='quoted secret' too"),
          ],
          'all attempts failed',
        ),
      }),
    );
    for (const secret of [
      'hunter2',
      'tok_live_123',
      'eyJhbGciOi',
      'YWxpY2U6aHVudGVyMg',
      's3cr3t',
      'p%40ss',
      'k-999',
      'sk_live_abc',
      'quoted secret',
    ])
      expect(text, secret).not.toContain(secret);
    // What helps find the fault stays.
    for (const kept of ['api.example.com/v1/charges', 'page=2', 'db.internal', 'sslmode=require', 'dbname=orders'])
      expect(text, kept).toContain(kept);
  });
});
