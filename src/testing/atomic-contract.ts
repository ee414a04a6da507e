import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { OperationIdentity } from '../core/identity.js';
import type { OperationStore } from '../store/operation-store.js';
import type { AtomicClaim, ClaimRequest } from '../store/atomic-store.js';
import type { Completion } from '../core/completion.js';
import {
  completion,
  type ContractSubject,
  expectCompleted,
  FINGERPRINT,
  gate,
  hex,
  PRINCIPAL,
} from './contract-fixtures.js';
import type { OperationRecord } from '../core/record.js';

const request = (identity: OperationIdentity, lockTimeoutMs = 5000): ClaimRequest => ({
  identity,
  fingerprint: FINGERPRINT,
  lockTimeoutMs,
});

/** What an attempt came to: its claim, or the record that took the identity before its own could be written. */
type Attempt = AtomicClaim | { readonly kind: 'taken'; readonly record: OperationRecord };

const taken = (record: OperationRecord): Attempt => ({ kind: 'taken', record });

/** One transaction: claims, stores `stored` when it claimed, and commits or rolls back; answers the claim. */
function settle<Tx>(
  store: OperationStore<Tx>,
  identity: OperationIdentity,
  commit: boolean,
  stored?: Completion,
  lockTimeoutMs?: number,
): Promise<Attempt> {
  return store.atomic(
    request(identity, lockTimeoutMs),
    ({ claim }) =>
      Promise.resolve(
        commit && claim.kind === 'claimed' && stored !== undefined
          ? { commit, value: claim, completion: stored }
          : { commit: false, value: claim },
      ),
    taken,
  );
}

/** Atomic mode: the claim, the completion and the application's writes commit together, or nothing does. */
export function describeAtomicContract<Tx>(subject: ContractSubject<Tx>, concurrent: boolean): void {
  describe('atomic mode', () => {
    it('claims an identity nobody holds', async () => {
      expect(await settle(subject.store, subject.identity(), false)).toEqual({ kind: 'claimed' });
    });

    it('gives a second claim the committed record, with status, headers and body bytes exactly as stored', async () => {
      const identity = subject.identity();
      await settle(subject.store, identity, true, completion());
      const claim = await settle(subject.store, identity, false);
      if (claim.kind !== 'existing') throw new Error(`Expected the existing record, got ${claim.kind}.`);
      expect(expectCompleted(claim.record, completion()).mode).toBe('atomic');
      expectCompleted(await subject.store.read(identity), completion());
    });

    it('keeps a business refusal as failed, and an omitted body as omitted', async () => {
      const refused = subject.identity();
      await settle(subject.store, refused, true, completion('failed'));
      expectCompleted(await subject.store.read(refused), completion('failed'));
      const omitted = subject.identity();
      const withoutBody = { ...completion('completed', new Uint8Array()), omitted: true };
      await settle(subject.store, omitted, true, withoutBody);
      expectCompleted(await subject.store.read(omitted), withoutBody);
    });

    it('leaves nothing behind when the claim rolls back, so the next claim runs', async () => {
      const identity = subject.identity();
      expect(await settle(subject.store, identity, false, completion())).toEqual({ kind: 'claimed' });
      expect(await subject.store.read(identity)).toBeUndefined();
      expect(await settle(subject.store, identity, false)).toEqual({ kind: 'claimed' });
    });

    it('rolls back and passes an error thrown by the work through unchanged', async () => {
      const identity = subject.identity();
      const thrown = new Error('the handler failed');
      const attempt = subject.store.atomic(request(identity), () => Promise.reject(thrown), taken);
      await expect(attempt).rejects.toBe(thrown);
      expect(await subject.store.read(identity)).toBeUndefined();
    });

    it('keeps the principal digest the record was written with, byte for byte, and none when it was given none', async () => {
      const identity = subject.identity();
      await subject.store.atomic(
        { ...request(identity), principal: PRINCIPAL },
        () => Promise.resolve({ commit: true, value: undefined, completion: completion() }),
        () => undefined,
      );
      const read = await subject.store.read(identity);
      expect(hex(expectCompleted(read, completion()).principal ?? new Uint8Array())).toBe(hex(PRINCIPAL));
      const claim = await settle(subject.store, identity, false);
      if (claim.kind !== 'existing') throw new Error(`Expected the existing record, got ${claim.kind}.`);
      expect(hex(claim.record.principal ?? new Uint8Array())).toBe(hex(PRINCIPAL));
      const without = subject.identity();
      await settle(subject.store, without, true, completion());
      expect((await subject.store.read(without))?.principal).toBeUndefined();
    });

    it('keeps the same key apart across tenants and operations', async () => {
      const identity = subject.identity();
      await settle(subject.store, identity, true, completion());
      expect(await settle(subject.store, { ...identity, tenant: `${identity.tenant}-other` }, false)).toEqual({
        kind: 'claimed',
      });
      expect(await settle(subject.store, { ...identity, operation: 'contract.other@1' }, false)).toEqual({
        kind: 'claimed',
      });
    });

    it('runs a plain transaction and passes its value and its errors through', async () => {
      expect(await subject.store.transaction(() => Promise.resolve('value'))).toBe('value');
      const thrown = new Error('the work failed');
      await expect(subject.store.transaction(() => Promise.reject(thrown))).rejects.toBe(thrown);
    });

    if (concurrent) describeConcurrentClaims(subject);
  });
}

/** Left out for stores that run one transaction at a time, where a second claim cannot start before the first ends. */
function describeConcurrentClaims<Tx>(subject: ContractSubject<Tx>): void {
  /** A first attempt that has claimed `identity` and holds its transaction open until `release`. */
  async function hold(
    identity: OperationIdentity,
    commit: boolean,
  ): Promise<{ readonly release: () => void; readonly done: Promise<Attempt> }> {
    const claimed = gate();
    const release = gate();
    const done = subject.store.atomic(
      request(identity),
      async ({ claim }) => {
        claimed.open();
        await release.opened;
        return commit && claim.kind === 'claimed'
          ? { commit, value: claim, completion: completion() }
          : { commit: false, value: claim };
      },
      taken,
    );
    await Promise.race([claimed.opened, done]);
    return { release: release.open, done };
  }

  /** A second claim of `identity`, checked to be still waiting behind the first. */
  async function waiting(identity: OperationIdentity): Promise<{ readonly answer: Promise<Attempt> }> {
    const held = subject.nextHeldClaim();
    let settled = false;
    const second = settle(subject.store, identity, false, undefined, 10_000).finally(() => {
      settled = true;
    });
    // The second has found the identity held, and the first holds it for as long as it is not released: no answer can
    // have come yet. A store that answers at once settles the second first.
    await Promise.race([held, second]);
    expect(settled).toBe(false);
    return { answer: second };
  }

  describe('a claim concurrent with an uncommitted one', () => {
    it('waits for it, then gets its committed record', async () => {
      const identity = subject.identity();
      const first = await hold(identity, true);
      const { answer } = await waiting(identity);
      first.release();
      expect(await first.done).toEqual({ kind: 'claimed' });
      const claim = await answer;
      if (claim.kind !== 'existing') throw new Error(`Expected the existing record, got ${claim.kind}.`);
      expectCompleted(claim.record, completion());
    });

    it('claims the identity when the first rolls back', async () => {
      const identity = subject.identity();
      const first = await hold(identity, false);
      const { answer } = await waiting(identity);
      first.release();
      await first.done;
      expect(await answer).toEqual({ kind: 'claimed' });
    });

    it('is busy once the lock wait runs out, and leaves the first attempt unharmed', async () => {
      const identity = subject.identity();
      const first = await hold(identity, true);
      expect(await settle(subject.store, identity, false, undefined, 50)).toEqual({ kind: 'busy' });
      first.release();
      expect(await first.done).toEqual({ kind: 'claimed' });
      expectCompleted(await subject.store.read(identity), completion());
    });
  });

  describe('a writer that does not wait for the claim', () => {
    it('commits its record first: the claim’s own record is refused by the primary key, and everything rolls back to that record', async () => {
      const identity = subject.identity();
      const first = await hold(identity, true);
      // Leased mode on the same identity takes no lock: its record commits while the atomic attempt runs.
      const leased = await subject.store.claimLease({
        identity,
        fingerprint: FINGERPRINT,
        input: {},
        mode: 'leased',
        ownerToken: randomUUID(),
        leaseSeconds: 60,
      });
      expect(leased.kind).toBe('claimed');
      first.release();
      const attempt = await first.done;
      if (attempt.kind !== 'taken') throw new Error(`Expected the record that took the identity, got ${attempt.kind}.`);
      expect(attempt.record).toMatchObject({ state: 'in_progress', mode: 'leased' });
      expect(await subject.store.read(identity)).toMatchObject({ state: 'in_progress', mode: 'leased' });
    });
  });
}
