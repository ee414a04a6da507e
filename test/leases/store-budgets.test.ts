import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { fingerprint } from '../../src/core/fingerprint.js';
import type { OperationMode } from '../../src/core/record.js';
import { resolveOperation } from '../../src/leases/resolve.js';
import { LeaseKeeper } from '../../src/modes/lease-keeper.js';
import type { Lease } from '../../src/store/lease-store.js';
import { engines } from '../support/engines.js';
import { hold, PATIENCE_MS } from '../support/hold.js';
import { OPERATION, useLeasedHarness } from './harness.js';
import { waitFor } from '../support/wait-for.js';

/**
 * The recovery worker and the lease keeper against a store that fails or
 * stalls: a failed pass reaches `onError`, and a statement stuck behind a lock
 * fails within the store budget instead of holding the worker forever.
 */
describe.each(engines)(
  'the recovery worker and the lease keeper when the store fails or stalls on $name',
  (factory) => {
    const service = useLeasedHarness(factory);

    const claim = async (mode: Exclude<OperationMode, 'atomic'> = 'leased', leaseSeconds = 300): Promise<Lease> => {
      const input = { order: `ord-${randomUUID()}`, amount: 1000 };
      const identity = { tenant: 'tenant-a', operation: OPERATION, key: randomUUID() };
      const claimed = await service.config.store.claimLease({
        identity,
        fingerprint: fingerprint(input),
        input,
        mode,
        ownerToken: randomUUID(),
        leaseSeconds,
      });
      if (claimed.kind !== 'claimed') throw new Error('not claimed');
      return claimed.lease;
    };

    const lockRow = (lease: Lease) =>
      hold(service.engine.database, 'SELECT 1 FROM retrysafe_operations WHERE key = $1 FOR UPDATE', [
        lease.identity.key,
      ]);

    it('tells onError about a pass that failed, and goes on passing', async () => {
      service.setUp();
      const errors: unknown[] = [];
      const stop = new AbortController();
      await service.engine.database.query('ALTER TABLE retrysafe_operations RENAME TO retrysafe_operations_away');
      let running: Promise<void> | undefined;
      try {
        running = service.worker({ idleMs: 20, onError: (error) => errors.push(error) }).run(stop.signal);
        await waitFor(() => Promise.resolve(errors.length >= 2));
      } finally {
        await service.engine.database.query('ALTER TABLE retrysafe_operations_away RENAME TO retrysafe_operations');
        stop.abort();
        await running;
      }
      expect(errors[0]).toMatchObject({ code: 'store-unavailable' });
    });

    it('gives up a take-over stuck behind a lock on the record within the store budget', async () => {
      service.setUp({ storeTimeoutMs: 200 });
      const lease = await claim();
      await service.expireLease(lease.identity.key);
      const release = await lockRow(lease);
      try {
        await expect(service.worker().runOnce()).rejects.toMatchObject({ code: 'store-unavailable' });
      } finally {
        await release();
      }
    });

    it('gives up marking an operation unknown when that write is stuck behind a lock, within the store budget', async (context) => {
      // PGlite runs one transaction at a time: a lock held elsewhere stalls the take-over before it, as the test above shows.
      if (!service.engine.concurrent) context.skip();
      service.setUp({ storeTimeoutMs: 200 });
      const lease = await claim('transparent');
      await service.expireLease(lease.identity.key);
      // Only the write that marks it unknown waits: the take-over before it goes through.
      // One statement a call: some data layers (Prisma) cannot send several at once.
      await service.engine.database.query(`
      CREATE OR REPLACE FUNCTION test_wait_before_unknown() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN PERFORM pg_advisory_xact_lock(7001); RETURN NEW; END $$`);
      await service.engine.database.query(`
      CREATE TRIGGER test_wait_before_unknown BEFORE UPDATE ON retrysafe_operations
        FOR EACH ROW WHEN (NEW.state = 'unknown') EXECUTE FUNCTION test_wait_before_unknown()`);
      const release = await hold(service.engine.database, 'SELECT true AS held FROM pg_advisory_xact_lock(7001)');
      try {
        await expect(service.worker().runOnce()).rejects.toMatchObject({ code: 'store-unavailable' });
        expect(service.events).toContainEqual(
          expect.objectContaining({ type: 'taken-over', identity: lease.identity }),
        );
      } finally {
        await release();
        await service.engine.database.query('DROP TRIGGER test_wait_before_unknown ON retrysafe_operations');
        await service.engine.database.query('DROP FUNCTION test_wait_before_unknown()');
      }
    });

    it("gives up an operator's verdict stuck behind a lock on the record within the store budget", async () => {
      service.setUp({ storeTimeoutMs: 200 });
      const lease = await claim();
      await service.config.store.markUnknown(lease, 'The provider could not tell.');
      const release = await lockRow(lease);
      try {
        await expect(
          resolveOperation(service.config, lease.identity, {
            state: 'failed',
            reply: { status: 402, body: { error: 'declined' } },
            reason: 'The provider declined it.',
          }),
        ).rejects.toMatchObject({ code: 'store-unavailable' });
      } finally {
        await release();
      }
    });

    it('counts the lease lost when every renewal is stuck behind a lock until the lease would have run out', async () => {
      service.setUp({ storeTimeoutMs: 200 });
      const lease = await claim('leased', 1);
      const keeper = new LeaseKeeper(service.config.store, lease, service.config.clock);
      const release = await lockRow(lease);
      try {
        await waitFor(() => Promise.resolve(keeper.signal.aborted), { limitMs: PATIENCE_MS });
        expect(keeper.signal.reason).toMatchObject({
          code: 'lease-lost',
          message: 'The lease could not be renewed in time.',
        });
      } finally {
        keeper.stop();
        await release();
      }
    });
  },
);
