import { describe, expect, it } from 'vitest';
import { IdempotentFetchError } from '../client/fetch-error.js';
import { CodedError } from '../core/coded-error.js';
import { RetrysafeError } from '../core/errors.js';
import { CheckError, isCheckError } from './check-error.js';

describe('the public error classes', () => {
  const cause = new Error('ECONNREFUSED');
  const errors = [
    new RetrysafeError('store-unavailable', 'The operation store failed.', { cause }),
    new CheckError('unreachable', 'The endpoint could not be reached.', { cause }),
    new IdempotentFetchError('attempts-exhausted', 'Every attempt failed.', {
      attempts: 3,
      idempotencyKey: 'k',
      cause,
    }),
  ];

  it('share one base: an Error with a stable code and its cause', () => {
    for (const error of errors) {
      expect(error).toBeInstanceOf(Error);
      expect(error).toBeInstanceOf(CodedError);
      expect(error.cause).toBe(cause);
    }
    expect(errors.map((error) => [error.name, error.code])).toEqual([
      ['RetrysafeError', 'store-unavailable'],
      ['CheckError', 'unreachable'],
      ['IdempotentFetchError', 'attempts-exhausted'],
    ]);
  });

  it('stay told apart by instanceof and by their guards', () => {
    const [retrysafe, check, fetch] = errors;
    expect(retrysafe).not.toBeInstanceOf(CheckError);
    expect(check).not.toBeInstanceOf(RetrysafeError);
    expect(fetch).not.toBeInstanceOf(CheckError);
    expect(errors.map((error) => isCheckError(error))).toEqual([false, true, false]);
    expect(isCheckError(check, 'count-unreadable')).toBe(false);
  });

  it('keep what the client error adds', () => {
    const error = new IdempotentFetchError('aborted', 'Aborted.', { attempts: 1, idempotencyKey: undefined });
    expect([error.attempts, error.idempotencyKey, 'cause' in error]).toEqual([1, undefined, false]);
  });
});
