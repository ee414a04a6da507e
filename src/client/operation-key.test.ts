import { describe, expect, it } from 'vitest';
import { isIdempotentFetchError } from './fetch-error.js';
import { operationKey } from './operation-key.js';

const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe('operationKey', () => {
  it.each(['POST', 'PATCH'])('creates a new version 7 UUID for each %s, each after the one before', (method) => {
    const keys = Array.from({ length: 1000 }, () => operationKey(method, undefined, new Headers()) ?? '');
    expect(keys.every((key) => uuid.test(key))).toBe(true);
    expect(new Set(keys).size).toBe(keys.length);
    expect([...keys].sort()).toEqual(keys);
  });

  it.each(['GET', 'HEAD', 'PUT', 'DELETE', 'OPTIONS', 'PURGE'])('gives %s no key of its own', (method) => {
    expect(operationKey(method, undefined, new Headers())).toBeUndefined();
  });

  it('uses a given key as is, on any method', () => {
    expect(operationKey('POST', 'order-42', new Headers())).toBe('order-42');
    expect(operationKey('PUT', 'order-42', new Headers())).toBe('order-42');
  });

  it('uses a key already in the headers as is, in whatever form it was written', () => {
    expect(operationKey('POST', undefined, new Headers({ 'Idempotency-Key': '"quoted"' }))).toBe('"quoted"');
    expect(operationKey('POST', 'same', new Headers({ 'Idempotency-Key': 'same' }))).toBe('same');
  });

  it.each(['', 'has space', 'a,b', '"quoted"', 'caf\u00e9', 'tab\t'])(
    'refuses the key %j before anything is sent',
    (key) => {
      expect(() => operationKey('POST', key, new Headers())).toThrow(
        expect.objectContaining({ code: 'invalid-options' }),
      );
    },
  );

  it('refuses a key that disagrees with the header', () => {
    let thrown: unknown;
    try {
      operationKey('POST', 'one', new Headers({ 'Idempotency-Key': 'two' }));
    } catch (error) {
      thrown = error;
    }
    expect(isIdempotentFetchError(thrown, 'invalid-options')).toBe(true);
  });
});
