import type { Clock, TimerHandle } from '../core/clock.js';

/** A clock that moves only when told to, for tests of rules in time. */
export interface ManualClock extends Clock {
  /**
   * Moves time `ms` forward, firing each timer that falls due, earliest first
   * (in the order set when two fall due together), at its own time, and
   * letting pending promise work settle after each, so that a timer set by
   * one that fired also fires if it falls due within the same advance.
   */
  advance(ms: number): Promise<void>;
  /** Timers set and not yet fired or cleared. */
  pending(): number;
}

interface Timer {
  readonly at: number;
  readonly order: number;
  readonly fn: () => void;
}

/** Lets promise callbacks queued so far, and the ones they queue, run. */
function settle(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/** A `ManualClock` that starts at `startMs` since 1970; its monotonic time starts at 0. */
export function manualClock(startMs = 0): ManualClock {
  let elapsed = 0;
  let order = 0;
  const timers = new Map<TimerHandle, Timer>();
  const due = (until: number): [TimerHandle, Timer] | undefined => {
    let next: [TimerHandle, Timer] | undefined;
    for (const entry of timers) {
      const [, timer] = entry;
      if (timer.at > until) continue;
      if (next === undefined || timer.at < next[1].at || (timer.at === next[1].at && timer.order < next[1].order))
        next = entry;
    }
    return next;
  };
  return {
    now: () => startMs + elapsed,
    monotonic: () => elapsed,
    setTimeout(fn, ms) {
      const handle = {};
      timers.set(handle, { at: elapsed + Math.max(0, ms), order: order++, fn });
      return handle;
    },
    clearTimeout(handle) {
      timers.delete(handle);
    },
    async advance(ms) {
      const until = elapsed + ms;
      await settle();
      for (let next = due(until); next !== undefined; next = due(until)) {
        const [handle, timer] = next;
        timers.delete(handle);
        elapsed = Math.max(elapsed, timer.at);
        timer.fn();
        await settle();
      }
      elapsed = until;
      await settle();
    },
    pending: () => timers.size,
  };
}
