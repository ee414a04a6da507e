import { type Clock, sleep } from '../core/clock.js';

/** Subscribes `wake` to new work; resolves to the function that unsubscribes. */
export type Listener = (wake: () => void) => Promise<() => Promise<void>>;

export interface PollLoopOptions {
  /** One pass; answers whether it did a full batch, so that the next pass should follow at once. */
  readonly pass: () => Promise<boolean>;
  /** Longest rest after a pass that was not full. */
  readonly idleMs: number;
  /** Cuts the rest short when new work is announced. */
  readonly listen?: Listener;
  readonly onError?: (error: unknown) => void;
  /** Times the rests. */
  readonly clock: Clock;
}

/**
 * Runs passes until `signal` aborts, resting between them. A notification that
 * arrives during a pass is kept, so the rest after it is skipped: new work is
 * never left waiting for the poll.
 */
export async function pollLoop(options: PollLoopOptions, signal: AbortSignal): Promise<void> {
  let rung: boolean;
  let interrupt: AbortController | undefined;
  const wake = (): void => {
    rung = true;
    interrupt?.abort();
  };
  const unlisten = await options.listen?.(wake).catch((error: unknown) => {
    // Notifications are an optimisation: without them, polling still finds the work.
    options.onError?.(error);
    return undefined;
  });
  try {
    while (!signal.aborted) {
      rung = false;
      const full = await options.pass().catch((error: unknown) => {
        options.onError?.(error);
        return false;
      });
      if (full || rung) continue;
      interrupt = new AbortController();
      await sleep(options.clock, options.idleMs, AbortSignal.any([signal, interrupt.signal]));
      interrupt = undefined;
    }
  } finally {
    await unlisten?.().catch((error: unknown) => options.onError?.(error));
  }
}
