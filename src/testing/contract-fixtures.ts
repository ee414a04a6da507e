import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, expect } from 'vitest';
import { fingerprint } from '../core/fingerprint.js';
import type { OperationIdentity } from '../core/identity.js';
import type { PrincipalDigest } from '../core/principal.js';
import type { CompletedRecord, OperationRecord } from '../core/record.js';
import { type OperationStore } from '../store/operation-store.js';
import { type Completion } from '../core/completion.js';
import { defaultRetention } from '../core/retention.js';

/** A store opened for the contract suite, on a database of its own. */
export interface StoreUnderTest<Tx> {
  readonly store: OperationStore<Tx>;
  /**
   * Makes the lease of `identity` expire now, as if its owner had stopped
   * renewing it, so that expiry is tested without waiting. It acts on the
   * database this store was opened on; for PostgreSQL:
   * `UPDATE retrysafe_operations SET lease_expires_at = now() - interval '1 second' WHERE …`.
   */
  expire(identity: OperationIdentity): Promise<void>;
  /**
   * Resolves once an atomic claim begun after the call finds its identity
   * held by a running attempt, and so waits. Required with `concurrent: true`:
   * the tests of a claim waiting behind another start from that event rather
   * than from a pause that a busy machine can outlast.
   */
  nextHeldClaim?(): Promise<void>;
  close(): Promise<void>;
}

/** The store shared by one suite's tests, and fresh identities that no other test uses. */
export interface ContractSubject<Tx> {
  readonly store: OperationStore<Tx>;
  expire(this: void, identity: OperationIdentity): Promise<void>;
  nextHeldClaim(this: void): Promise<void>;
  identity(this: void, overrides?: Partial<OperationIdentity>): OperationIdentity;
}

export function useStore<Tx>(open: () => Promise<StoreUnderTest<Tx>>): ContractSubject<Tx> {
  let opened: StoreUnderTest<Tx> | undefined;
  // One tenant per suite run, so that a store kept between runs holds no identity twice.
  const tenant = `contract-${randomUUID()}`;
  beforeAll(async () => {
    opened = await open();
  });
  afterAll(() => opened?.close());
  const current = (): StoreUnderTest<Tx> => {
    if (opened === undefined) throw new Error('The store under test is not open yet.');
    return opened;
  };
  return {
    get store() {
      return current().store;
    },
    expire: (identity) => current().expire(identity),
    nextHeldClaim: () => {
      const store = current();
      if (store.nextHeldClaim === undefined) throw new Error('A concurrent store under test needs nextHeldClaim.');
      return store.nextHeldClaim();
    },
    identity: (overrides = {}) => ({ tenant, operation: 'contract.check@1', key: randomUUID(), ...overrides }),
  };
}

export const FINGERPRINT = fingerprint({ contract: 'first request' });

/** A principal digest: 32 bytes, kept byte for byte. */
export const PRINCIPAL: PrincipalDigest = Uint8Array.from({ length: 32 }, (_, i) => 255 - i * 7);

/** Every byte value, invalid UTF-8 included, so that any re-encoding shows. */
const ALL_BYTES = Uint8Array.from({ length: 256 }, (_, i) => i);

export function completion(state: Completion['state'] = 'completed', body: Uint8Array = ALL_BYTES): Completion {
  return {
    state,
    reply: {
      status: state === 'completed' ? 201 : 402,
      headers: { 'content-type': 'application/octet-stream', location: '/things/7' },
      body,
    },
    retention: defaultRetention,
  };
}

export function hex(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('hex');
}

/** Asserts that `record` is completed with exactly the stored part of `expected`. */
export function expectCompleted(record: OperationRecord | undefined, expected: Completion): CompletedRecord {
  if (record === undefined || (record.state !== 'completed' && record.state !== 'failed')) {
    throw new Error(`Expected a completed record, found ${record?.state ?? 'none'}.`);
  }
  expect(record.state).toBe(expected.state);
  expect(hex(record.fingerprint)).toBe(hex(FINGERPRINT));
  expect(record.response.status).toBe(expected.reply.status);
  expect(record.response.headers).toEqual(expected.reply.headers);
  expect(hex(record.response.body)).toBe(hex(expected.reply.body));
  expect(record.responseOmitted).toBe(expected.omitted ?? false);
  return record;
}

/** A promise settled from outside, to hold a transaction open while another one runs. */
export interface Gate {
  readonly opened: Promise<void>;
  open(this: void): void;
}

export function gate(): Gate {
  let open = (): void => {};
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { opened, open };
}
