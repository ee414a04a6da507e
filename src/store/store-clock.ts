import { type Clock, systemClock, type TimerHandle } from '../core/clock.js';
import { RetrysafeError } from '../core/errors.js';

/** The store budget of a call when none is configured (`storeTimeoutMs`). */
export const defaultStoreTimeoutMs = 5000;

/**
 * Bounds the time spent waiting on the store, not on the handler. A request
 * alternates between store phases (claim, complete, commit) and the handler;
 * each store phase gets its own budget. When one runs out, `expired` and
 * `race` reject so the caller can answer 503 at once, and any later
 * `leaveStore` throws so that work which was merely late never runs. A
 * request that stays within its budgets makes one promise here, its race's.
 */
export class StoreClock {
  private timer: TimerHandle | undefined;
  private overrun: RetrysafeError | undefined;
  private expiry: { readonly promise: Promise<never>; readonly reject: (error: RetrysafeError) => void } | undefined;
  private racing: ((error: RetrysafeError) => void) | undefined;

  constructor(private readonly clock: Clock = systemClock) {}

  /** Rejects when a store phase overruns its budget; never resolves. Made when first asked for: `race` needs none. */
  get expired(): Promise<never> {
    if (this.expiry === undefined) {
      let reject: (error: RetrysafeError) => void = () => {};
      const promise = new Promise<never>((_resolve, fail) => {
        reject = fail;
      });
      promise.catch(() => {});
      this.expiry = { promise, reject };
      if (this.overrun !== undefined) reject(this.overrun);
    }
    return this.expiry.promise;
  }

  enterStore(budgetMs: number): void {
    this.clear();
    this.timer = this.clock.setTimeout(() => {
      this.timer = undefined;
      this.overrun = new RetrysafeError(
        'store-unavailable',
        `The operation store did not answer within ${budgetMs} ms.`,
      );
      this.expiry?.reject(this.overrun);
      this.racing?.(this.overrun);
    }, budgetMs);
  }

  leaveStore(): void {
    this.clear();
    if (this.overrun !== undefined)
      throw new RetrysafeError(
        'store-unavailable',
        'The operation store answered after the request had given up on it.',
      );
  }

  /** Settles with `work`, or rejects when a store phase overruns; either way no timer is left. */
  race<T>(work: Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      if (this.overrun !== undefined) reject(this.overrun);
      this.racing = reject;
      // Settling clears the timer of a phase the work entered last; a late failure after an overrun is dropped here.
      work.then(
        (value) => {
          this.clear();
          resolve(value);
        },
        (error: unknown) => {
          this.clear();
          // The work's own error, passed through as it was thrown.
          // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors
          reject(error);
        },
      );
    });
  }

  private clear(): void {
    if (this.timer !== undefined) this.clock.clearTimeout(this.timer);
    this.timer = undefined;
  }
}

/** Bounds one store call on its own, for the statements of leased mode. */
export function withinStoreTimeout<T>(call: Promise<T>, budgetMs: number, by: Clock = systemClock): Promise<T> {
  const clock = new StoreClock(by);
  clock.enterStore(budgetMs);
  return clock.race(call);
}
