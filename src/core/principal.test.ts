import { describe, expect, it } from 'vitest';
import { principalDigest, samePrincipal } from './principal.js';

const identity = { tenant: 't1', operation: 'orders.create@1', key: 'k1' };

describe('principalDigest', () => {
  it('is 32 bytes, the same for the same user and identity, and never the user in clear', () => {
    const digest = principalDigest(identity, 'alice@example.com');
    expect(digest.byteLength).toBe(32);
    expect(Buffer.from(digest).equals(principalDigest(identity, 'alice@example.com'))).toBe(true);
    expect(Buffer.from(digest).toString('latin1')).not.toContain('alice');
  });

  it('differs for another key, operation or tenant, so one user cannot be followed across records', () => {
    const digest = Buffer.from(principalDigest(identity, 'alice'));
    for (const other of [
      { ...identity, key: 'k2' },
      { ...identity, operation: 'orders.create@2' },
      { ...identity, tenant: 't2' },
    ]) {
      expect(digest.equals(principalDigest(other, 'alice'))).toBe(false);
    }
  });

  it('keeps the parts apart: moving characters between them gives another digest', () => {
    const split = Buffer.from(principalDigest({ ...identity, key: 'k1a' }, 'lice'));
    expect(split.equals(principalDigest(identity, 'alice'))).toBe(false);
  });
});

describe('samePrincipal', () => {
  const alice = principalDigest(identity, 'alice');
  it('lets a record without a principal answer anyone, and one with a principal only that principal', () => {
    expect(samePrincipal(undefined, undefined)).toBe(true);
    expect(samePrincipal(undefined, alice)).toBe(true);
    expect(samePrincipal(alice, principalDigest(identity, 'alice'))).toBe(true);
    expect(samePrincipal(alice, principalDigest(identity, 'bob'))).toBe(false);
    expect(samePrincipal(alice, undefined)).toBe(false);
  });
});
