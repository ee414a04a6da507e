import { armTimer, type Clock } from '../core/clock.js';
import type { OperationIdentity } from '../core/identity.js';

/** The first pause between two claims of a duplicate, and the longest; each pause doubles, with jitter. */
const FIRST_PAUSE_MS = 4;
const LONGEST_PAUSE_MS = 100;

/** An attempt of this process that holds an identity's claim, and the duplicates here waiting for its end. */
interface Holder {
  ended?: Promise<void>;
  end?: () => void;
}

/**
 * How a duplicate waits for the attempt that holds its identity: without a
 * database connection. When the holder runs in this process the duplicate
 * wakes as its transaction ends; otherwise it pauses, doubling each time,
 * before it tries the claim again. A pool of a few connections then keeps
 * serving other keys under a storm of duplicates.
 */
export class DuplicateWait {
  readonly #holders = new Map<string, Holder>();

  /** Marks `identity` as held here until the returned function is called, once its transaction has ended. */
  hold(identity: OperationIdentity): () => void {
    const id = idOf(identity);
    const holder: Holder = {};
    this.#holders.set(id, holder);
    return () => {
      if (this.#holders.get(id) === holder) this.#holders.delete(id);
      holder.end?.();
    };
  }

  /**
   * Waits before the duplicate's next claim, never past `deadline` (the
   * clock's monotonic time): until the holder here ends, or for the
   * `pause`-th pause when the holder is elsewhere (or unknown yet).
   */
  async pause(identity: OperationIdentity, pause: number, deadline: number, clock: Clock): Promise<void> {
    const left = deadline - clock.monotonic();
    if (left <= 0) return;
    const holder = this.#holders.get(idOf(identity));
    const ms = holder === undefined ? Math.min(left, pauseMs(pause)) : left;
    if (holder !== undefined)
      holder.ended ??= new Promise<void>((resolve) => {
        holder.end = resolve;
      });
    let disarm = (): void => {};
    const timer = new Promise<void>((resolve) => (disarm = armTimer(clock, ms, resolve)));
    await (holder?.ended === undefined ? timer : Promise.race([holder.ended, timer]));
    disarm();
  }
}

/** PostgreSQL's text holds no NUL, so NUL separates the three parts of any identity that can be stored. */
function idOf(identity: OperationIdentity): string {
  return `${identity.tenant}\u0000${identity.operation}\u0000${identity.key}`;
}

/** Doubles from the first pause up to the longest, each between half and all of it, so that duplicates spread out. */
function pauseMs(pause: number): number {
  const ceiling = Math.min(LONGEST_PAUSE_MS, FIRST_PAUSE_MS * 2 ** pause);
  return ceiling / 2 + Math.random() * (ceiling / 2);
}
