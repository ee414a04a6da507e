import { randomBytes, randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { keyring } from '../../src/encryption/index.js';
import { fingerprint } from '../../src/core/fingerprint.js';
import { resolveOperation } from '../../src/index.js';
import { engines } from '../support/engines.js';
import { TENANT, useEncryptionHarness } from './harness.js';

const K1 = randomBytes(32);
const K2 = randomBytes(32);
const onlyK1 = keyring({ current: 'k1', keys: { k1: K1 } });
const rotated = keyring({ current: 'k2', keys: { k1: K1, k2: K2 } });

/** The prefix of a body encrypted under `keyId`. */
const sealedWith = (keyId: string): Buffer =>
  Buffer.concat([Buffer.from('RSE1'), Buffer.of(keyId.length), Buffer.from(keyId)]);
const text = (body: Uint8Array): string => Buffer.from(body).toString('utf8');

describe.each(engines)('encryption at rest on $name', (factory) => {
  const h = useEncryptionHarness(factory);

  it('stores the body encrypted under the current key id, keeps the headers readable, and replays the exact bytes', async () => {
    const config = h.config(onlyK1);
    const [key, secret] = [randomUUID(), `secret-${randomUUID()}`];
    const [calls, notes] = [h.calls(), await h.notes()];
    const first = await h.atomic(config, key, secret);
    expect(first.status).toBe(201);
    expect(text(first.body)).toContain(secret);

    const row = await h.row(key);
    expect(row?.state).toBe('completed');
    expect(row?.response_body.includes(secret)).toBe(false);
    expect(row?.response_body.subarray(0, 7)).toEqual(sealedWith('k1'));
    expect(row?.response_headers).toEqual({
      'content-type': 'application/json; charset=utf-8',
      location: first.headers.location,
    });
    expect(row?.resource_ref).toBe(first.headers.location);

    const replay = await h.atomic(config, key, secret);
    expect(replay.status).toBe(201);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(Buffer.from(replay.body).equals(first.body)).toBe(true);
    expect(h.calls()).toBe(calls + 1);
    expect(await h.notes()).toBe(notes + 1);
  });

  it('after rotation replays bodies of the old key and encrypts new ones with the new key', async () => {
    const [oldKey, newKey, secret] = [randomUUID(), randomUUID(), `secret-${randomUUID()}`];
    const before = await h.atomic(h.config(onlyK1), oldKey, secret);
    const calls = h.calls();

    const config = h.config(rotated);
    const replay = await h.atomic(config, oldKey, secret);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(Buffer.from(replay.body).equals(before.body)).toBe(true);
    expect(h.calls()).toBe(calls);
    expect((await h.row(oldKey))?.response_body.subarray(0, 7)).toEqual(sealedWith('k1'));

    const after = await h.atomic(config, newKey, secret);
    const row = await h.row(newKey);
    expect(row?.response_body.subarray(0, 7)).toEqual(sealedWith('k2'));
    expect(row?.response_body.includes(secret)).toBe(false);
    expect(Buffer.from((await h.atomic(config, newKey, secret)).body).equals(after.body)).toBe(true);
    expect(h.calls()).toBe(calls + 1);
  });

  it('encrypts the answers of leased operations and of operator resolutions too', async () => {
    const config = h.config(rotated);
    const [key, secret] = [randomUUID(), `secret-${randomUUID()}`];
    const first = await h.leased(config, key, secret);
    expect(first.status).toBe(201);
    const row = await h.row(key);
    expect(row?.response_body.includes(secret)).toBe(false);
    expect(row?.response_body.subarray(0, 7)).toEqual(sealedWith('k2'));
    const calls = h.calls();
    const replay = await h.leased(config, key, secret);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(Buffer.from(replay.body).equals(first.body)).toBe(true);
    expect(h.calls()).toBe(calls);

    const identity = { tenant: TENANT, operation: 'messages.send@1', key: randomUUID() };
    const claim = await config.store.claimLease({
      identity,
      fingerprint: fingerprint({}),
      input: {},
      mode: 'leased',
      ownerToken: randomUUID(),
      leaseSeconds: 30,
    });
    if (claim.kind !== 'claimed') throw new Error('expected a new lease');
    expect(await config.store.markUnknown(claim.lease, 'the provider timed out')).toBe(true);
    const resolution = { resolved: secret };
    expect(
      await resolveOperation(config, identity, {
        state: 'completed',
        reply: { status: 201, body: resolution },
        reason: 'found by hand',
      }),
    ).toEqual({ resolved: true });
    expect((await h.row(identity.key))?.response_body.includes(secret)).toBe(false);
    const record = await config.store.read(identity);
    if (record?.state !== 'completed') throw new Error(`expected a completed record, found ${record?.state}`);
    expect(text(record.response.body)).toBe(JSON.stringify(resolution));
  });

  it('replays bodies stored before encryption was turned on, unless encryption is required', async () => {
    const [key, secret] = [randomUUID(), `secret-${randomUUID()}`];
    const plain = await h.atomic(h.config(undefined), key, secret);
    expect((await h.row(key))?.response_body.includes(secret)).toBe(true);
    const calls = h.calls();

    const replay = await h.atomic(h.config(rotated), key, secret);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(Buffer.from(replay.body).equals(plain.body)).toBe(true);

    const strict = await h.atomic(h.config(rotated, { requireEncryption: true }), key, secret);
    expect(strict.status).toBe(503);
    expect(JSON.parse(text(strict.body))).toMatchObject({ type: 'https://retrysafe.dev/problems/store-unavailable' });
    expect(h.calls()).toBe(calls);
  });
});
