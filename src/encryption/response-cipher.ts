import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import type { OperationIdentity } from '../core/identity.js';
import { readSealedHeader, SEALED_IV_BYTES, SEALED_MAGIC, SEALED_TAG_BYTES } from '../core/sealed-body.js';
import type { Keyring } from './keyring.js';

/** Why a stored body cannot be replayed. */
export type Unreadable =
  /** Its key id is not in the keyring: the key was removed too early. */
  | { readonly reason: 'unknown-key'; readonly keyId: string }
  /** The tag does not match: the bytes were altered, or belong to another operation. */
  | { readonly reason: 'not-authentic'; readonly keyId: string }
  /** It starts like an encrypted body but is too short to be one. */
  | { readonly reason: 'malformed' }
  /** It is not encrypted, and plaintext was refused. */
  | { readonly reason: 'plaintext' };

export type OpenedBody = { readonly ok: true; readonly body: Uint8Array } | ({ readonly ok: false } & Unreadable);

/** Encrypts `body` with the keyring's current key, bound to `identity`. */
export function sealBody(body: Uint8Array, identity: OperationIdentity, keys: Keyring): Uint8Array {
  const { id, key } = keys.current;
  const header = Buffer.concat([SEALED_MAGIC, Buffer.of(Buffer.byteLength(id, 'latin1')), Buffer.from(id, 'latin1')]);
  const iv = randomBytes(SEALED_IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', key, iv, { authTagLength: SEALED_TAG_BYTES });
  cipher.setAAD(associatedData(header, identity));
  const ciphertext = Buffer.concat([cipher.update(body), cipher.final()]);
  return Buffer.concat([header, iv, cipher.getAuthTag(), ciphertext]);
}

/**
 * Decrypts a stored body. A body without the `RSE1` prefix was written before
 * encryption was turned on: it is returned as is, unless `requireEncryption`.
 */
export function openBody(
  stored: Uint8Array,
  identity: OperationIdentity,
  keys: Keyring,
  requireEncryption: boolean,
): OpenedBody {
  const header = readSealedHeader(stored);
  if (header.kind === 'plain')
    return requireEncryption ? { ok: false, reason: 'plaintext' } : { ok: true, body: stored };
  if (header.kind === 'malformed') return { ok: false, reason: 'malformed' };
  const { keyId, ivAt, tagAt, dataAt } = header;
  const bytes = Buffer.from(stored.buffer, stored.byteOffset, stored.byteLength);
  const key = keys.key(keyId);
  if (key === undefined) return { ok: false, reason: 'unknown-key', keyId };
  const decipher = createDecipheriv('aes-256-gcm', key, bytes.subarray(ivAt, tagAt), {
    authTagLength: SEALED_TAG_BYTES,
  });
  decipher.setAAD(associatedData(bytes.subarray(0, ivAt), identity));
  decipher.setAuthTag(bytes.subarray(tagAt, dataAt));
  try {
    return { ok: true, body: Buffer.concat([decipher.update(bytes.subarray(dataAt)), decipher.final()]) };
  } catch {
    return { ok: false, reason: 'not-authentic', keyId };
  }
}

/**
 * The header and the identity, authenticated but not encrypted: a body copied
 * to another operation's record, or given another key id, does not decrypt.
 * Each identity part is length-prefixed, so no two identities encode alike.
 */
function associatedData(header: Uint8Array, identity: OperationIdentity): Buffer {
  const chunks = [header];
  for (const part of [identity.tenant, identity.operation, identity.key]) {
    const bytes = Buffer.from(part, 'utf8');
    const length = Buffer.alloc(4);
    length.writeUInt32BE(bytes.length);
    chunks.push(length, bytes);
  }
  return Buffer.concat(chunks);
}
