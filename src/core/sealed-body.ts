/**
 * The self-describing form of a body `retrysafe/encryption` sealed, so that
 * keys can rotate and the format can change: `RSE1`, the key id's length (1
 * byte), the key id, a 12-byte IV, the 16-byte GCM tag, then the ciphertext.
 * Here, apart from the cipher, so that a reader of stored records (the
 * console) tells a sealed body without a key.
 */
export const SEALED_MAGIC = Buffer.from('RSE1', 'latin1');
export const SEALED_IV_BYTES = 12;
export const SEALED_TAG_BYTES = 16;

/** What a stored body's first bytes say it is; offsets are from its start. */
export type SealedHeader =
  /** Not sealed: written before encryption was turned on, or without it. */
  | { readonly kind: 'plain' }
  /** It starts like a sealed body but is too short to be one. */
  | { readonly kind: 'malformed' }
  | {
      readonly kind: 'sealed';
      readonly keyId: string;
      readonly ivAt: number;
      readonly tagAt: number;
      readonly dataAt: number;
    };

export function readSealedHeader(body: Uint8Array): SealedHeader {
  const bytes = Buffer.from(body.buffer, body.byteOffset, body.byteLength);
  if (!bytes.subarray(0, SEALED_MAGIC.length).equals(SEALED_MAGIC)) return { kind: 'plain' };
  const idLength = bytes[SEALED_MAGIC.length] ?? 0;
  const ivAt = SEALED_MAGIC.length + 1 + idLength;
  const tagAt = ivAt + SEALED_IV_BYTES;
  const dataAt = tagAt + SEALED_TAG_BYTES;
  if (idLength === 0 || bytes.length < dataAt) return { kind: 'malformed' };
  return { kind: 'sealed', keyId: bytes.toString('latin1', SEALED_MAGIC.length + 1, ivAt), ivAt, tagAt, dataAt };
}
