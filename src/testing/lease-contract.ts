import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { OperationIdentity } from '../core/identity.js';
import type { OperationMode } from '../core/record.js';
import type { Lease, LeaseStore, StepProgress } from '../store/lease-store.js';
import { completion, type ContractSubject, expectCompleted, FINGERPRINT, hex, PRINCIPAL } from './contract-fixtures.js';

const LEASE_SECONDS = 60;
const INPUT = { order: 'ord-7', amount: 1299, lines: [{ sku: 'W', quantity: 2 }] };

async function claimed<Tx>(
  store: LeaseStore<Tx>,
  identity: OperationIdentity,
  mode: Exclude<OperationMode, 'atomic'> = 'leased',
): Promise<Lease> {
  const claim = await store.claimLease({
    identity,
    fingerprint: FINGERPRINT,
    input: INPUT,
    mode,
    ownerToken: randomUUID(),
    leaseSeconds: LEASE_SECONDS,
  });
  if (claim.kind !== 'claimed') throw new Error(`Expected a new lease, found a ${claim.record.state} record.`);
  return claim.lease;
}

/** Leased mode: committed claims, take-over by compare-and-swap, and writes fenced by owner and fencing token. */
export function describeLeaseContract<Tx>(subject: ContractSubject<Tx>): void {
  const { identity } = subject;
  const claim = (id: OperationIdentity, mode?: Exclude<OperationMode, 'atomic'>): Promise<Lease> =>
    claimed(subject.store, id, mode);
  /** A lease taken over from an expired first owner: the first is stale, the second current. */
  async function takenOver(): Promise<{ stale: Lease; current: Lease }> {
    const stale = await claim(identity());
    await subject.expire(stale.identity);
    const current = await subject.store.takeOver(stale.identity, stale.fencingToken, randomUUID(), LEASE_SECONDS);
    if (current === undefined) throw new Error('The take-over of an expired lease failed.');
    return { stale, current };
  }

  describe('leased mode', () => {
    it('commits a claim as an in_progress record with a lease and the input', async () => {
      const id = identity();
      const ownerToken = randomUUID();
      const result = await subject.store.claimLease({
        identity: id,
        fingerprint: FINGERPRINT,
        input: INPUT,
        mode: 'leased',
        ownerToken,
        leaseSeconds: LEASE_SECONDS,
      });
      if (result.kind !== 'claimed') throw new Error('Expected a new lease.');
      expect(result.lease).toMatchObject({ identity: id, ownerToken, attempt: 1, input: INPUT });
      const record = await subject.store.read(id);
      expect(record).toMatchObject({
        state: 'in_progress',
        mode: 'leased',
        attempt: 1,
        fencingToken: result.lease.fencingToken,
      });
      if (record?.state !== 'in_progress') throw new Error('Expected an in_progress record.');
      expect(record.leaseExpiresAt.getTime()).toBeGreaterThan(record.readAt.getTime());
    });

    it('keeps the principal digest a claim was made with, while it runs and once it is complete', async () => {
      const id = identity();
      const first = await subject.store.claimLease({
        identity: id,
        fingerprint: FINGERPRINT,
        principal: PRINCIPAL,
        input: INPUT,
        mode: 'leased',
        ownerToken: randomUUID(),
        leaseSeconds: LEASE_SECONDS,
      });
      if (first.kind !== 'claimed') throw new Error('Expected a new lease.');
      const again = await subject.store.claimLease({
        identity: id,
        fingerprint: FINGERPRINT,
        input: INPUT,
        mode: 'leased',
        ownerToken: randomUUID(),
        leaseSeconds: LEASE_SECONDS,
      });
      if (again.kind !== 'existing') throw new Error('Expected the existing record.');
      expect(hex(again.record.principal ?? new Uint8Array())).toBe(hex(PRINCIPAL));
      expect(await subject.store.completeLease(first.lease, completion())).toBe(true);
      expect(hex(expectCompleted(await subject.store.read(id), completion()).principal ?? new Uint8Array())).toBe(
        hex(PRINCIPAL),
      );
      expect((await subject.store.read((await claim(identity())).identity))?.principal).toBeUndefined();
    });

    it('gives a second claim the running record with its lease', async () => {
      const lease = await claim(identity(), 'transparent');
      const again = await subject.store.claimLease({
        identity: lease.identity,
        fingerprint: FINGERPRINT,
        input: INPUT,
        mode: 'transparent',
        ownerToken: randomUUID(),
        leaseSeconds: LEASE_SECONDS,
      });
      if (again.kind !== 'existing') throw new Error('Expected the existing record.');
      expect(again.record).toMatchObject({
        state: 'in_progress',
        mode: 'transparent',
        attempt: 1,
        fencingToken: lease.fencingToken,
      });
      expect(Buffer.from(again.record.fingerprint).equals(FINGERPRINT)).toBe(true);
    });

    it('takes a lease over only once it expired, and only with the fencing token seen', async () => {
      const lease = await claim(identity());
      expect(
        await subject.store.takeOver(lease.identity, lease.fencingToken, randomUUID(), LEASE_SECONDS),
      ).toBeUndefined();
      await subject.expire(lease.identity);
      expect(
        await subject.store.takeOver(lease.identity, lease.fencingToken + 1, randomUUID(), LEASE_SECONDS),
      ).toBeUndefined();
      const owner = randomUUID();
      const taken = await subject.store.takeOver(lease.identity, lease.fencingToken, owner, LEASE_SECONDS);
      expect(taken).toMatchObject({
        identity: lease.identity,
        ownerToken: owner,
        attempt: 2,
        input: INPUT,
        leaseSeconds: LEASE_SECONDS,
      });
      expect(taken?.fencingToken).toBeGreaterThan(lease.fencingToken);
      expect(await subject.store.read(lease.identity)).toMatchObject({
        state: 'in_progress',
        attempt: 2,
        fencingToken: taken?.fencingToken,
      });
    });

    it('lets exactly one of two racing take-overs win', async () => {
      const lease = await claim(identity());
      await subject.expire(lease.identity);
      const race = await Promise.all(
        [1, 2].map(() => subject.store.takeOver(lease.identity, lease.fencingToken, randomUUID(), LEASE_SECONDS)),
      );
      expect(race.filter((taken) => taken !== undefined)).toHaveLength(1);
      expect(await subject.store.read(lease.identity)).toMatchObject({ attempt: 2 });
    });

    it('refuses every write of an owner whose lease was taken over, and changes nothing', async () => {
      const { stale, current } = await takenOver();
      let ran = false;
      const work = (): Promise<string> => {
        ran = true;
        return Promise.resolve('written');
      };
      expect(await subject.store.renew(stale)).toBe(false);
      expect(await subject.store.startStep(stale, 'charge')).toBe(false);
      expect(await subject.store.checkpoint(stale, 'charge', { id: 'ch_stale' })).toBe(false);
      expect(await subject.store.checkpointWith(stale, 'record', work)).toEqual({ owned: false });
      expect(ran).toBe(false);
      expect(await subject.store.completeLease(stale, completion())).toBe(false);
      expect(
        await subject.store.release(stale, { delaySeconds: 0, counted: true, error: 'the provider did not answer' }),
      ).toBe(false);
      expect(await subject.store.markUnknown(stale, 'stale')).toBe(false);
      expect(await subject.store.abandon(stale)).toBe(false);
      expect(await subject.store.read(stale.identity)).toMatchObject({
        state: 'in_progress',
        attempt: 2,
        fencingToken: current.fencingToken,
      });
      expect(await subject.store.steps(current)).toEqual(new Map());
    });

    it("accepts the current owner's writes and returns its recovery points by step name", async () => {
      const { current } = await takenOver();
      expect(await subject.store.renew(current)).toBe(true);
      expect(await subject.store.checkpoint(current, 'charge', { id: 'ch_1', amount: 1299 })).toBe(true);
      expect(await subject.store.checkpoint(current, 'notify', null)).toBe(true);
      expect(await subject.store.checkpointWith(current, 'record', () => Promise.resolve(['payment', 7]))).toEqual({
        owned: true,
        value: ['payment', 7],
      });
      expect(await subject.store.steps(current)).toEqual(
        new Map<string, StepProgress>([
          ['charge', { state: 'finished', result: { id: 'ch_1', amount: 1299 } }],
          ['notify', { state: 'finished', result: null }],
          ['record', { state: 'finished', result: ['payment', 7] }],
        ]),
      );
      expect(await subject.store.completeLease(current, completion())).toBe(true);
      expect(expectCompleted(await subject.store.read(current.identity), completion()).mode).toBe('leased');
      expect(await subject.store.renew(current)).toBe(false);
    });

    it('records a step as started before its call, for every later attempt to see, until its result is checkpointed', async () => {
      const { stale, current } = await takenOver();
      expect(await subject.store.startStep(current, 'charge')).toBe(true);
      expect(await subject.store.startStep(current, 'notify')).toBe(true);
      expect(await subject.store.checkpoint(current, 'notify', null)).toBe(true);
      await subject.expire(current.identity);
      const third = await subject.store.takeOver(current.identity, current.fencingToken, randomUUID(), LEASE_SECONDS);
      if (third === undefined) throw new Error('The take-over of an expired lease failed.');
      expect(await subject.store.steps(third)).toEqual(
        new Map<string, StepProgress>([
          ['charge', { state: 'started' }],
          ['notify', { state: 'finished', result: null }],
        ]),
      );
      // A later attempt starts the step again and finishes it; a finished step is not started again.
      expect(await subject.store.startStep(third, 'charge')).toBe(true);
      expect(await subject.store.checkpoint(third, 'charge', { id: 'ch_3' })).toBe(true);
      expect(await subject.store.startStep(third, 'notify')).toBe(false);
      expect(await subject.store.checkpoint(third, 'charge', { id: 'ch_other' })).toBe(false);
      expect((await subject.store.steps(third)).get('charge')).toEqual({ state: 'finished', result: { id: 'ch_3' } });
      expect(await subject.store.startStep(stale, 'refund')).toBe(false);
    });

    it('deletes an abandoned operation, so that the next claim starts afresh', async () => {
      const lease = await claim(identity());
      expect(await subject.store.abandon(lease)).toBe(true);
      expect(await subject.store.read(lease.identity)).toBeUndefined();
      expect((await claim(lease.identity)).attempt).toBe(1);
    });

    it('shortens a released lease, so that it can be taken over at once, and counts the failures that count', async () => {
      const lease = await claim(identity());
      expect(lease).toMatchObject({ failures: 0, ageSeconds: 0, leaseSeconds: LEASE_SECONDS });
      expect(
        await subject.store.release(lease, { delaySeconds: 0, counted: true, error: 'the provider did not answer' }),
      ).toBe(true);
      const taken = await subject.store.takeOver(lease.identity, lease.fencingToken, randomUUID(), LEASE_SECONDS);
      expect(taken).toMatchObject({ attempt: 2, failures: 1 });
      expect(taken?.ageSeconds).toBeGreaterThanOrEqual(0);
      if (taken === undefined) throw new Error('The take-over of a released lease failed.');
      expect(
        await subject.store.release(taken, { delaySeconds: 0, counted: false, error: 'the provider did not answer' }),
      ).toBe(true);
      expect(
        await subject.store.takeOver(taken.identity, taken.fencingToken, randomUUID(), LEASE_SECONDS),
      ).toMatchObject({ attempt: 3, failures: 1 });
    });

    it('neither lists nor lets anyone take over a released operation before its backoff has passed, even once its lease ran out', async () => {
      const lease = await claim(identity());
      expect(
        await subject.store.release(lease, { delaySeconds: 3600, counted: true, error: 'the provider did not answer' }),
      ).toBe(true);
      await subject.expire(lease.identity);
      expect((await subject.store.expiredLeases(10_000)).map((expired) => expired.identity.key)).not.toContain(
        lease.identity.key,
      );
      expect(
        await subject.store.takeOver(lease.identity, lease.fencingToken, randomUUID(), LEASE_SECONDS),
      ).toBeUndefined();
      expect(await subject.store.read(lease.identity)).toMatchObject({ state: 'in_progress', attempt: 1 });
    });

    it('resolves an operation only while its outcome is unknown', async () => {
      const lease = await claim(identity());
      expect(await subject.store.resolveUnknown(lease.identity, completion(), 'too early')).toBe(false);
      expect(await subject.store.markUnknown(lease, 'the provider did not answer')).toBe(true);
      expect(await subject.store.read(lease.identity)).toMatchObject({
        state: 'unknown',
        reason: 'the provider did not answer',
      });
      expect(await subject.store.completeLease(lease, completion())).toBe(false);
      expect(await subject.store.resolveUnknown(lease.identity, completion('failed'), 'no charge found')).toBe(true);
      expectCompleted(await subject.store.read(lease.identity), completion('failed'));
      expect(await subject.store.resolveUnknown(lease.identity, completion(), 'again')).toBe(false);
      expectCompleted(await subject.store.read(lease.identity), completion('failed'));
    });

    it('puts an unknown leased operation back into recovery, with its steps, only while it is unknown', async () => {
      const lease = await claim(identity());
      expect(await subject.store.checkpoint(lease, 'charge', { id: 'ch_1' })).toBe(true);
      expect(await subject.store.retryUnknown(lease.identity, randomUUID(), 'too early')).toBe(false);
      expect(
        await subject.store.release(lease, { delaySeconds: 0, counted: true, error: 'the provider did not answer' }),
      ).toBe(true);
      const second = await subject.store.takeOver(lease.identity, lease.fencingToken, randomUUID(), LEASE_SECONDS);
      if (second === undefined) throw new Error('The take-over of a released lease failed.');
      expect(await subject.store.markUnknown(second, 'the provider did not answer')).toBe(true);
      expect(await subject.store.retryUnknown(lease.identity, randomUUID(), 'provider fixed')).toBe(true);
      expect(await subject.store.read(lease.identity)).toMatchObject({ state: 'in_progress', attempt: 2 });
      expect((await subject.store.expiredLeases(10_000)).map((expired) => expired.identity.key)).toContain(
        lease.identity.key,
      );
      const third = await subject.store.takeOver(lease.identity, second.fencingToken, randomUUID(), LEASE_SECONDS);
      expect(third).toMatchObject({ attempt: 3, failures: 0, input: INPUT });
      if (third === undefined) throw new Error('The take-over of a retried operation failed.');
      expect(await subject.store.steps(third)).toEqual(
        new Map<string, StepProgress>([['charge', { state: 'finished', result: { id: 'ch_1' } }]]),
      );
      expect(await subject.store.retryUnknown(lease.identity, randomUUID(), 'twice')).toBe(false);
      const wrapped = await claim(identity(), 'transparent');
      expect(await subject.store.markUnknown(wrapped, 'lost')).toBe(true);
      expect(await subject.store.retryUnknown(wrapped.identity, randomUUID(), 'cannot re-run')).toBe(false);
    });

    it('lists only in_progress operations whose lease expired', async () => {
      const expired = await claim(identity());
      const transparent = await claim(identity(), 'transparent');
      const running = await claim(identity());
      const unknown = await claim(identity());
      const completed = await claim(identity());
      for (const lease of [expired, transparent, unknown, completed]) await subject.expire(lease.identity);
      await subject.store.markUnknown(unknown, 'gave up');
      await subject.store.completeLease(completed, completion());
      const ours = new Set([expired, transparent, running, unknown, completed].map((lease) => lease.identity.key));
      const listed = (await subject.store.expiredLeases(10_000)).filter((lease) => ours.has(lease.identity.key));
      expect(listed).toHaveLength(2);
      expect(listed).toEqual(
        expect.arrayContaining([
          { identity: expired.identity, fencingToken: expired.fencingToken, mode: 'leased' },
          { identity: transparent.identity, fencingToken: transparent.fencingToken, mode: 'transparent' },
        ]),
      );
      expect((await subject.store.expiredLeases(1)).length).toBeLessThanOrEqual(1);
    });

    it('lists, when given operations, only their expired leases and transparent ones', async () => {
      const mine = await claim(identity({ operation: 'contract.mine@1' }));
      const other = await claim(identity({ operation: 'contract.theirs@1' }));
      const transparent = await claim(identity({ operation: 'contract.wrapped@1' }), 'transparent');
      for (const lease of [mine, other, transparent]) await subject.expire(lease.identity);
      const ours = new Set([mine, other, transparent].map((lease) => lease.identity.key));
      const listed = async (operations: readonly string[]) =>
        (await subject.store.expiredLeases(10_000, operations)).filter((lease) => ours.has(lease.identity.key));
      const entry = (lease: Lease, mode: OperationMode) => ({
        identity: lease.identity,
        fencingToken: lease.fencingToken,
        mode,
      });
      const forMine = await listed(['contract.mine@1']);
      expect(forMine).toHaveLength(2);
      expect(forMine).toEqual(expect.arrayContaining([entry(mine, 'leased'), entry(transparent, 'transparent')]));
      expect(await listed([])).toEqual([entry(transparent, 'transparent')]);
    });
  });
}
