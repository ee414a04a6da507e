import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { IdempotentFetchError, idempotentFetchErrorCodes, isIdempotentFetchError } from './fetch-error.js';

describe('IdempotentFetchError', () => {
  it('has exactly the codes docs/client.md lists', async () => {
    const docs = await readFile(new URL('../../docs/client.md', import.meta.url), 'utf8');
    const section = docs.split('## When it stops')[1]?.split('\n## ')[0] ?? '';
    const documented = [...section.matchAll(/^\| `([a-z-]+)` \|/gm)].map((m) => m[1]);
    expect(documented).toEqual([...idempotentFetchErrorCodes]);
  });

  it('carries its code, attempts, key and cause', () => {
    const cause = new TypeError('fetch failed');
    const error = new IdempotentFetchError('attempts-exhausted', 'no answer', {
      attempts: 3,
      idempotencyKey: 'k',
      cause,
    });
    expect(error).toMatchObject({
      name: 'IdempotentFetchError',
      code: 'attempts-exhausted',
      attempts: 3,
      idempotencyKey: 'k',
      cause,
    });
    expect(error).toBeInstanceOf(Error);
    expect(isIdempotentFetchError(error, 'attempts-exhausted')).toBe(true);
    expect(isIdempotentFetchError(error, 'aborted')).toBe(false);
    expect(isIdempotentFetchError(cause)).toBe(false);
  });
});
