import { linkAbort } from './link-abort.js';
import { armTimer, type Clock, sleep } from '../core/clock.js';

/** How the call was ended from outside its own retry loop. */
export type StopReason = 'deadline-exceeded' | 'aborted';

/**
 * The time budget of one call: a timer for `deadlineMs` and the caller's
 * signals, merged into one signal that every attempt and wait listens to.
 */
export class Deadline {
  private readonly controller = new AbortController();
  private readonly endsAt: number;
  private readonly disarm: () => void;
  private readonly unlink: () => void;

  constructor(
    deadlineMs: number,
    callerSignals: readonly AbortSignal[],
    readonly clock: Clock,
  ) {
    this.endsAt = clock.monotonic() + deadlineMs;
    this.unlink = linkAbort(this.controller, callerSignals);
    this.disarm = armTimer(clock, deadlineMs, () =>
      this.controller.abort(new DOMException(`The ${deadlineMs} ms deadline passed.`, 'TimeoutError')),
    );
  }

  /** Aborted at the deadline or by the caller. */
  get signal(): AbortSignal {
    return this.controller.signal;
  }

  remainingMs(): number {
    return Math.max(0, this.endsAt - this.clock.monotonic());
  }

  /** Why the signal aborted; a caller's `TimeoutError` is a deadline too. */
  stopReason(): StopReason {
    const reason: unknown = this.controller.signal.reason;
    return reason instanceof DOMException && reason.name === 'TimeoutError' ? 'deadline-exceeded' : 'aborted';
  }

  /** Waits `ms`; false when the signal aborted first. */
  sleep(ms: number): Promise<boolean> {
    return sleep(this.clock, ms, this.controller.signal);
  }

  /** Releases the timer and the caller's signals; the call is over. */
  dispose(): void {
    this.disarm();
    this.unlink();
  }
}
