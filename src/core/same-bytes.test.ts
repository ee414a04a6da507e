import { describe, expect, it } from 'vitest';
import { sameBytes } from './same-bytes.js';

describe('sameBytes', () => {
  it('is true only for the same bytes', () => {
    expect(sameBytes('token', 'token')).toBe(true);
    expect(sameBytes('token', 'tokem')).toBe(false);
    expect(sameBytes('', '')).toBe(true);
    expect(sameBytes(Buffer.from([1, 2, 3]), Buffer.from([1, 2, 3]))).toBe(true);
    expect(sameBytes(Buffer.from([1, 2, 3]), Buffer.from([1, 2, 4]))).toBe(false);
  });

  it('is false, not a throw, for inputs of different lengths, in characters or in bytes only', () => {
    expect(sameBytes('token', 'tokens')).toBe(false);
    // Five characters each, six bytes against five in UTF-8.
    expect(sameBytes('tokén', 'token')).toBe(false);
    expect(sameBytes('token', 'tokén')).toBe(false);
    expect(sameBytes(Buffer.from([1, 2]), Buffer.from([1, 2, 3]))).toBe(false);
  });

  it('compares a string by its UTF-8 bytes', () => {
    expect(sameBytes('é', Buffer.from('é', 'utf8'))).toBe(true);
    expect(sameBytes('é', Buffer.from('é', 'latin1'))).toBe(false);
  });
});
