/** A timer set by a `Clock`, given back to cancel it. */
export type TimerHandle = object;

/**
 * The process's own time: what rules timed here (lease renewal, store
 * budgets, the replay cache's expiry, poll rests, the client's deadline and
 * backoff) read and wait on. Times the database decides (lease expiry,
 * retention) never come from here. Tests pass `manualClock` from
 * `retrysafe/testing` to move time by hand.
 */
export interface Clock {
  /** Milliseconds since 1970, for times compared with dates. */
  now(): number;
  /** Milliseconds from an arbitrary origin that never steps back, for durations. */
  monotonic(): number;
  /** Calls `fn` after `ms`; the timer does not keep the process alive. */
  setTimeout(fn: () => void, ms: number): TimerHandle;
  clearTimeout(handle: TimerHandle): void;
}

/** The system's clock and timers. */
export const systemClock: Clock = {
  now: () => Date.now(),
  monotonic: () => performance.now(),
  setTimeout(fn, ms) {
    const handle = setTimeout(fn, ms);
    // Timers guard work in flight; they never decide on their own whether the process stays up.
    handle.unref();
    return handle;
  },
  clearTimeout(handle) {
    clearTimeout(handle as NodeJS.Timeout);
  },
};
