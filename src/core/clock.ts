import { TIMER_MAX_MS } from './option-rules.js';

/** A timer set by a `Clock`, given back to clear it: the platform's handle, or a test clock's. */
export type TimerHandle = object | number;

/**
 * The program's own time: what rules timed here (lease renewal, store
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
  /** Calls `fn` after `ms`. */
  setTimeout(fn: () => void, ms: number): TimerHandle;
  clearTimeout(handle: TimerHandle): void;
}

/** The system's clock and timers. */
export const systemClock: Clock = {
  now: () => Date.now(),
  monotonic: () => performance.now(),
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout(handle) {
    clearTimeout(handle as Parameters<typeof clearTimeout>[0]);
  },
};

/** Lets the program exit while `handle` waits, where the platform's timers can: for timers that only guard work in flight. */
export function unrefTimer(handle: TimerHandle): TimerHandle {
  // Node's handles have `unref`; a browser's number and a test clock's handle have nothing to release.
  if (typeof handle === 'object') (handle as { unref?: () => unknown }).unref?.();
  return handle;
}

/** Calls `fire` after `ms` on `clock`, unless disarmed first. Past TIMER_MAX_MS (or Infinity) it never fires. */
export function armTimer(clock: Clock, ms: number, fire: () => void): () => void {
  if (!(ms <= TIMER_MAX_MS)) return () => {};
  const handle = clock.setTimeout(fire, Math.max(0, ms));
  return () => clock.clearTimeout(handle);
}

/** Waits `ms` on `clock`; false when `signal` aborted first. */
export function sleep(clock: Clock, ms: number, signal: AbortSignal): Promise<boolean> {
  if (signal.aborted) return Promise.resolve(false);
  return new Promise((resolve) => {
    const stop = (): void => {
      disarm();
      resolve(false);
    };
    const disarm = armTimer(clock, ms, () => {
      signal.removeEventListener('abort', stop);
      resolve(true);
    });
    signal.addEventListener('abort', stop, { once: true });
  });
}
