import { createSecretKey, type KeyObject } from 'node:crypto';
import { RetrysafeError } from '../core/errors.js';

/** AES-256 takes 32-byte keys. */
const KEY_BYTES = 32;

/** Stored in plaintext beside every body, in one length byte: visible ASCII, at most 255 characters. */
const KEY_ID = /^[!-~]{1,255}$/;

export interface KeyringOptions {
  /** The id of the key that encrypts new writes. */
  readonly current: string;
  /** Every key that may still have to decrypt a stored body, by id; each 32 random bytes. */
  readonly keys: Readonly<Record<string, Uint8Array>>;
}

/** The keys of encryption at rest: one encrypts, all of them decrypt. */
export interface Keyring {
  readonly current: { readonly id: string; readonly key: KeyObject };
  /** The key with this id, or undefined once it was removed. */
  key(id: string): KeyObject | undefined;
}

/**
 * Checks the keys once, at startup, and copies them into key objects so that
 * later changes to the caller's buffers do not reach them. Rotation: add a new
 * key, make it `current`, and keep the old ones until the responses they
 * encrypted have expired.
 */
export function keyring(options: KeyringOptions): Keyring {
  const keys = new Map<string, KeyObject>();
  for (const [id, key] of Object.entries(options.keys)) {
    if (!KEY_ID.test(id))
      throw new RetrysafeError('misuse', `Key id "${id}" must be 1 to 255 visible ASCII characters.`);
    if (!(key instanceof Uint8Array) || key.byteLength !== KEY_BYTES) {
      throw new RetrysafeError('misuse', `Key "${id}" must be ${KEY_BYTES} bytes (AES-256).`);
    }
    keys.set(id, createSecretKey(key));
  }
  const current = keys.get(options.current);
  if (current === undefined)
    throw new RetrysafeError('misuse', `The current key "${options.current}" is not among the keys.`);
  return { current: { id: options.current, key: current }, key: (id) => keys.get(id) };
}
