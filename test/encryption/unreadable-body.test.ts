import { randomBytes, randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { keyring } from '../../src/encryption/index.js';
import { isRetrysafeError, type Reply } from '../../src/index.js';
import { engines } from '../support/engines.js';
import { type EncryptionHarness, TENANT, useEncryptionHarness } from './harness.js';

const K1 = randomBytes(32);
const K2 = randomBytes(32);
const both = keyring({ current: 'k1', keys: { k1: K1, k2: K2 } });

/** Flips bits of one byte of a stored body, as someone with write access to the table could. */
async function flip(h: EncryptionHarness, key: string, position: 'last' | number, mask: number): Promise<void> {
  const at = position === 'last' ? 'length(response_body) - 1' : String(position);
  await h.database.query(
    `UPDATE retrysafe_operations SET response_body = set_byte(response_body, ${at}, get_byte(response_body, ${at}) # $3) WHERE tenant = $1 AND key = $2`,
    [TENANT, key, mask],
  );
}

describe.each(engines)('unreadable encrypted bodies on $name', (factory) => {
  const h = useEncryptionHarness(factory);

  /** Asserts the documented answer: 503 store-unavailable with Retry-After, caused by decryption-failed; nothing ran. */
  async function expectRefused(attempt: () => Promise<Reply>): Promise<void> {
    const [calls, notes, events] = [h.calls(), await h.notes(), h.events.length];
    const reply = await attempt();
    expect(reply.status).toBe(503);
    expect(reply.headers['retry-after']).toBe('1');
    expect(JSON.parse(Buffer.from(reply.body).toString('utf8'))).toMatchObject({
      type: 'https://retrysafe.dev/problems/store-unavailable',
    });
    expect(h.calls()).toBe(calls);
    expect(await h.notes()).toBe(notes);
    const failure = h.events.slice(events).find((event) => event.type === 'store-error');
    const error = failure?.type === 'store-error' ? failure.error : undefined;
    expect(isRetrysafeError(error, 'store-unavailable') && isRetrysafeError(error.cause, 'decryption-failed')).toBe(
      true,
    );
  }

  it('refuses a body whose key was removed from the keyring, and keeps the record', async () => {
    const [key, secret] = [randomUUID(), `secret-${randomUUID()}`];
    await h.atomic(h.config(keyring({ current: 'k1', keys: { k1: K1 } })), key, secret);
    const stored = await h.row(key);
    const withoutK1 = h.config(keyring({ current: 'k2', keys: { k2: K2 } }));
    await expectRefused(() => h.atomic(withoutK1, key, secret));
    expect(await h.row(key)).toEqual(stored);
    await expect(withoutK1.store.read({ tenant: TENANT, operation: 'notes.create@1', key })).rejects.toSatisfy(
      (error) =>
        isRetrysafeError(error, 'store-unavailable') &&
        isRetrysafeError(error.cause, 'decryption-failed') &&
        /"k1"/.test(error.cause.message),
    );
  });

  it('refuses a tampered ciphertext, and a key id rewritten to another known key', async () => {
    const config = h.config(both);
    const [tampered, renamed, secret] = [randomUUID(), randomUUID(), `secret-${randomUUID()}`];
    await h.atomic(config, tampered, secret);
    await h.atomic(config, renamed, secret);
    await flip(h, tampered, 'last', 1);
    // 'k1' becomes 'k2': byte 6 is the key id's last character.
    await flip(h, renamed, 6, 3);
    expect((await h.row(renamed))?.response_body.subarray(5, 7).toString()).toBe('k2');
    await expectRefused(() => h.atomic(config, tampered, secret));
    await expectRefused(() => h.atomic(config, renamed, secret));
  });

  it("refuses a body copied into another operation's record, and still replays the original", async () => {
    const config = h.config(both);
    const [source, target, secret] = [randomUUID(), randomUUID(), `secret-${randomUUID()}`];
    const original = await h.atomic(config, source, secret);
    await h.atomic(config, target, secret);
    await h.database.query(
      'UPDATE retrysafe_operations SET response_body = (SELECT response_body FROM retrysafe_operations WHERE tenant = $1 AND key = $2) WHERE tenant = $1 AND key = $3',
      [TENANT, source, target],
    );
    await expectRefused(() => h.atomic(config, target, secret));
    expect(Buffer.from((await h.atomic(config, source, secret)).body).equals(original.body)).toBe(true);
  });

  it('refuses an unreadable body on a leased retry too', async () => {
    const config = h.config(both);
    const [key, secret] = [randomUUID(), `secret-${randomUUID()}`];
    await h.leased(config, key, secret);
    await flip(h, key, 'last', 0x80);
    await expectRefused(() => h.leased(config, key, secret));
    expect((await h.row(key))?.state).toBe('completed');
  });

  it('refuses a plaintext body when encryption is required', async () => {
    const [key, secret] = [randomUUID(), `secret-${randomUUID()}`];
    await h.atomic(h.config(undefined), key, secret);
    await expectRefused(() => h.atomic(h.config(both, { requireEncryption: true }), key, secret));
  });
});
