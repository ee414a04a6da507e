import { type Clock, type TimerHandle, unrefTimer } from '../core/clock.js';
import { RetrysafeError } from '../core/errors.js';
import type { Lease, LeaseRenewal } from '../store/lease-store.js';

/**
 * Renews a lease in the background while a handler runs. When renewal is
 * refused (another worker took over) or has failed for longer than the lease
 * lasts, the lease counts as lost: `signal` aborts and the next step refuses
 * to start. Renewals go through the configuration's store, with its budget:
 * one stuck behind a lock fails, and the next interval tries again.
 */
export class LeaseKeeper {
  private readonly controller = new AbortController();
  private timer: TimerHandle | undefined;
  private heldUntil: number;

  constructor(
    private readonly store: LeaseRenewal,
    private readonly lease: Lease,
    private readonly clock: Clock,
  ) {
    this.heldUntil = clock.monotonic() + lease.leaseSeconds * 1000;
    this.schedule();
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** Throws `lease-lost` when the lease is gone. */
  assertHeld(): void {
    if (this.controller.signal.aborted || this.clock.monotonic() > this.heldUntil) {
      this.lose('The lease expired before it could be renewed.');
      throw this.controller.signal.reason;
    }
  }

  /** Called after any write that renewed the lease as a side effect. */
  renewed(): void {
    this.heldUntil = this.clock.monotonic() + this.lease.leaseSeconds * 1000;
  }

  lose(reason: string): void {
    if (!this.controller.signal.aborted) this.controller.abort(new RetrysafeError('lease-lost', reason));
  }

  stop(): void {
    if (this.timer !== undefined) this.clock.clearTimeout(this.timer);
    this.timer = undefined;
  }

  /** The next renewal, a third of the lease after this one was set. */
  private schedule(): void {
    const renewal = (): void => {
      this.schedule();
      void this.renew();
    };
    // Renewal guards a handler in flight: it never keeps the process alive on its own.
    this.timer = unrefTimer(this.clock.setTimeout(renewal, (this.lease.leaseSeconds * 1000) / 3));
  }

  private async renew(): Promise<void> {
    try {
      if (await this.store.renew(this.lease)) this.renewed();
      else this.lose('Another worker took the lease over.');
    } catch {
      // The store is unreachable: keep trying until the lease would have run out.
      if (this.clock.monotonic() > this.heldUntil) this.lose('The lease could not be renewed in time.');
    }
  }
}
