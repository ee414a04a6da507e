/**
 * Whether an atomic route reads the operation record before it opens its
 * transaction. The read answers a replay in one round trip instead of four
 * (`BEGIN`, the claim, the read of the record it found, `ROLLBACK`), or three
 * where the claim goes with `BEGIN` (node-postgres), and costs every new key
 * one more, so it pays once a quarter to a third of keyed requests are
 * replays; it starts at a quarter.
 * `auto` follows that share per operation; `always` and `never` fix the choice.
 * Both ways give the same answers: only their cost differs.
 */
export type ReadBeforeClaim = 'auto' | 'always' | 'never';

/** The choice for one operation, and what it learns from each keyed request. */
export interface ReadFirst {
  readonly now: boolean;
  /** A keyed request found a completed operation (`true`) or claimed a new one (`false`). */
  observe(replay: boolean): void;
}

/** The share of replays at which reading first starts to save round trips (see above). */
const BREAK_EVEN = 1 / 4;
/** Requests the moving share mostly remembers: enough to ride out a burst of retries, few enough to follow a change of traffic. */
const MEMORY = 32;

class ReplayShare implements ReadFirst {
  #share = 0;

  get now(): boolean {
    return this.#share >= BREAK_EVEN;
  }

  observe(replay: boolean): void {
    this.#share += ((replay ? 1 : 0) - this.#share) / MEMORY;
  }
}

const fixed = (now: boolean): ReadFirst => ({ now, observe: () => undefined });

/** One `ReadFirst` per operation name. */
export function readFirstPolicy(mode: ReadBeforeClaim): (operation: string) => ReadFirst {
  if (mode !== 'auto') {
    const choice = fixed(mode === 'always');
    return () => choice;
  }
  // Keyed by operation name: as many entries as the application has atomic routes.
  const shares = new Map<string, ReplayShare>();
  return (operation) => {
    let share = shares.get(operation);
    if (share === undefined) {
      share = new ReplayShare();
      shares.set(operation, share);
    }
    return share;
  };
}
