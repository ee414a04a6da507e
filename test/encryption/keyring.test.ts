import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { keyring } from '../../src/encryption/index.js';
import { openBody, sealBody } from '../../src/encryption/response-cipher.js';
import { isRetrysafeError } from '../../src/index.js';

const identity = { tenant: 'tenant-a', operation: 'notes.create@1', key: 'k-1' };
const plaintext = Buffer.from('{"card":"4242"}', 'utf8');

function misuse(build: () => unknown): string {
  try {
    build();
  } catch (error) {
    if (isRetrysafeError(error, 'misuse')) return error.message;
    throw error;
  }
  throw new Error('expected a misuse error');
}

describe('keyring', () => {
  it('refuses keys that are not 32 bytes', () => {
    expect(misuse(() => keyring({ current: 'k1', keys: { k1: randomBytes(16) } }))).toMatch(/32 bytes/);
    expect(misuse(() => keyring({ current: 'k1', keys: { k1: randomBytes(33) } }))).toMatch(/32 bytes/);
    expect(misuse(() => keyring({ current: 'k1', keys: { k1: 'a'.repeat(32) as unknown as Uint8Array } }))).toMatch(
      /32 bytes/,
    );
  });

  it('refuses a current key that is not among the keys, and no keys at all', () => {
    expect(misuse(() => keyring({ current: 'k2', keys: { k1: randomBytes(32) } }))).toMatch(
      /"k2" is not among the keys/,
    );
    expect(misuse(() => keyring({ current: 'k1', keys: {} }))).toMatch(/"k1" is not among the keys/);
  });

  it('refuses key ids that cannot be stored in front of a body', () => {
    for (const id of ['', 'with space', 'clé', 'k'.repeat(256)]) {
      expect(misuse(() => keyring({ current: id, keys: { [id]: randomBytes(32) } }))).toMatch(/visible ASCII/);
    }
  });

  it("keeps its own copy of the keys, so later changes to the caller's buffer do not reach it", () => {
    const secret = randomBytes(32);
    const keys = keyring({ current: 'k1', keys: { k1: secret } });
    const sealed = sealBody(plaintext, identity, keys);
    secret.fill(0);
    expect(openBody(sealed, identity, keys, true)).toEqual({ ok: true, body: plaintext });
  });
});

describe('encrypted body format', () => {
  const keys = keyring({ current: 'key-2024', keys: { 'key-2024': randomBytes(32) } });

  it('is RSE1, the key id with its length, a 12-byte IV, a 16-byte tag and the ciphertext', () => {
    const sealed = Buffer.from(sealBody(plaintext, identity, keys));
    expect(sealed.subarray(0, 4).toString('latin1')).toBe('RSE1');
    expect(sealed[4]).toBe('key-2024'.length);
    expect(sealed.subarray(5, 13).toString('latin1')).toBe('key-2024');
    expect(sealed.length).toBe(13 + 12 + 16 + plaintext.length);
    expect(sealed.includes(plaintext)).toBe(false);
  });

  it('uses a fresh IV for every body, so equal answers are not equal bytes', () => {
    expect(Buffer.from(sealBody(plaintext, identity, keys)).equals(sealBody(plaintext, identity, keys))).toBe(false);
  });

  it('opens only under the identity it was sealed for', () => {
    const sealed = sealBody(plaintext, identity, keys);
    expect(openBody(sealed, identity, keys, true)).toEqual({ ok: true, body: plaintext });
    for (const other of [
      { ...identity, tenant: 'tenant-b' },
      { ...identity, operation: 'notes.create@2' },
      { ...identity, key: 'k-2' },
    ]) {
      expect(openBody(sealed, other, keys, true)).toEqual({ ok: false, reason: 'not-authentic', keyId: 'key-2024' });
    }
  });

  it('tells a truncated body and a plaintext one apart', () => {
    const sealed = sealBody(plaintext, identity, keys);
    expect(openBody(sealed.subarray(0, 20), identity, keys, true)).toEqual({ ok: false, reason: 'malformed' });
    expect(openBody(plaintext, identity, keys, true)).toEqual({ ok: false, reason: 'plaintext' });
    expect(openBody(plaintext, identity, keys, false)).toEqual({ ok: true, body: plaintext });
  });
});
