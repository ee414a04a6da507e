import { type Clock, systemClock, type TimerHandle } from '../core/clock.js';
import { RetrysafeError } from '../core/errors.js';

/** The store budget of a call when none is configured (`storeTimeoutMs`). */
export const defaultStoreTimeoutMs = 5000;

/**
 * Bounds the time spent waiting on the store, not on the handler. A request
 * alternates between store phases (claim, complete, commit) and the handler;
 * each store phase gets its own budget. When one runs out, `expired` rejects so
 * the caller can answer 503 at once, and any later `leaveStore` throws so that
 * work which was merely late never runs.
 */
export class StoreClock {
  private timer: TimerHandle | undefined;
  private timedOut = false;
  private fail: (error: RetrysafeError) => void = () => {};
  /** Rejects when a store phase overruns its budget; never resolves. */
  readonly expired: Promise<never>;

  constructor(private readonly clock: Clock = systemClock) {
    this.expired = new Promise<never>((_resolve, reject) => {
      this.fail = reject;
    });
    this.expired.catch(() => {});
  }

  enterStore(budgetMs: number): void {
    this.clear();
    this.timer = this.clock.setTimeout(() => {
      this.timedOut = true;
      this.fail(new RetrysafeError('store-unavailable', `The operation store did not answer within ${budgetMs} ms.`));
    }, budgetMs);
  }

  leaveStore(): void {
    this.clear();
    if (this.timedOut)
      throw new RetrysafeError(
        'store-unavailable',
        'The operation store answered after the request had given up on it.',
      );
  }

  /** Settles with `work`, or rejects when a store phase overruns. */
  async race<T>(work: Promise<T>): Promise<T> {
    work.catch(() => {});
    try {
      return await Promise.race([work, this.expired]);
    } finally {
      this.clear();
    }
  }

  private clear(): void {
    if (this.timer !== undefined) this.clock.clearTimeout(this.timer);
    this.timer = undefined;
  }
}

/** Bounds one store call on its own, for the statements of leased mode. */
export async function withinStoreTimeout<T>(call: Promise<T>, budgetMs: number, by: Clock = systemClock): Promise<T> {
  const clock = new StoreClock(by);
  clock.enterStore(budgetMs);
  return clock.race(call);
}
