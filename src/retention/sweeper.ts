import { type Clock, sleep, systemClock } from '../core/clock.js';
import { checkOptions, count, milliseconds, type OptionRules } from '../core/option-rules.js';
import { pollLoop } from '../background/poll-loop.js';
import { pruneInBatches, pruneRules } from '../background/prune-in-batches.js';
import type { MaintenanceStore, SweepBatch } from '../store/maintenance-store.js';
import { isRetrysafeError } from '../core/errors.js';
import { extend } from '../core/extend.js';
import { budgeted } from '../store/budgeted-store.js';
import { defaultStoreTimeoutMs } from '../store/store-clock.js';

/** Extra pruning the sweeper runs after its own, such as delivered outbox messages. */
export interface PruneTask {
  /** Names the task in the report, for example `outbox`. */
  readonly name: string;
  /** Removes what has expired; resolves to how many rows went. */
  run(): Promise<number>;
}

/** How one prune task ended: a failing task does not stop the others. */
export type PruneOutcome =
  | { readonly name: string; readonly ok: true; readonly removed: number }
  | { readonly name: string; readonly ok: false; readonly error: unknown };

/** How far a pass has come; reported after every batch. */
export interface SweepProgress {
  /** Completed records whose response expired, now tombstones. */
  readonly tombstoned: number;
  /** Expired tombstones deleted: their keys are new again. */
  readonly deleted: number;
  /** Statements run over the operation records, each over at most one batch of rows. */
  readonly batches: number;
}

/** The steps of a pass over retrysafe's own tables, in the order it runs them. */
export const SWEEP_STEPS = ['tombstone', 'delete', 'activity'] as const;

export type SweepStep = (typeof SWEEP_STEPS)[number];

/** A step that failed; the pass ran the others all the same. */
export interface SweepFailure {
  readonly step: SweepStep;
  readonly error: unknown;
}

/** What one pass did. */
export interface SweepReport extends SweepProgress {
  /** Hourly activity buckets deleted past `activityRetentionSeconds`. */
  readonly activityPruned: number;
  /** The steps that failed, in order (`run` tells each to `onError`); empty when every step went through. */
  readonly failed: readonly SweepFailure[];
  readonly tasks: readonly PruneOutcome[];
}

export interface SweeperOptions {
  readonly store: MaintenanceStore;
  /** How long each store statement may take before the pass fails with `store-unavailable` (told to `onError` by `run`). Default 5000 ms. */
  readonly storeTimeoutMs?: number;
  /** Rows per statement. Default 500: short enough that no request waits behind a batch. */
  readonly batchSize?: number;
  /** How long the console's hourly activity counts are kept, in seconds. Default 14 days. */
  readonly activityRetentionSeconds?: number;
  /** Run after the operation records are swept, in order. */
  readonly tasks?: readonly PruneTask[];
  /** Pause between passes of `run`, in ms. Default 60000. */
  readonly idleMs?: number;
  /**
   * The most records a pass tombstones and deletes a second: after a batch
   * that put it ahead, it rests until it is back at this rate, leaving the
   * database's disk and CPU to requests. Default `Infinity`, no limit.
   */
  readonly maxRecordsPerSecond?: number;
  /** Times the rests and store budgets. Default `systemClock`; tests pass `manualClock()`. */
  readonly clock?: Clock;
  /** Called after every batch, for progress lines. */
  readonly onBatch?: (progress: SweepProgress) => void;
  /** `run`: told about each failed step of a pass, which the next pass tries again. */
  readonly onError?: (error: unknown) => void;
}

export const sweeperRules = {
  storeTimeoutMs: milliseconds(1),
  batchSize: pruneRules.batchSize,
  activityRetentionSeconds: pruneRules.olderThanSeconds,
  idleMs: milliseconds(1),
  maxRecordsPerSecond: count(1, 1_000_000_000, { unbounded: true }),
} as const satisfies OptionRules<SweeperOptions>;

type Tally = { -readonly [K in keyof SweepProgress]: SweepProgress[K] };

/**
 * Applies retention: turns expired responses into tombstones, then deletes
 * expired tombstones and the hourly activity counts past their retention,
 * batch by batch until none is left, then runs the prune tasks. Expiry is
 * decided here, never when a request reads a record. Each step runs whether
 * or not the one before it failed: a tombstone step that keeps failing on
 * some row must not keep tombstones from being deleted, nor the reverse.
 */
export class Sweeper {
  private readonly batchSize: number;
  private readonly store: MaintenanceStore;

  constructor(private readonly options: SweeperOptions) {
    checkOptions(sweeperRules, options);
    this.batchSize = options.batchSize ?? 500;
    this.store = budgeted(options.store, options.storeTimeoutMs ?? defaultStoreTimeoutMs, {}, options.clock);
  }

  /** One pass over everything that has expired; tests and the command line call this. */
  runOnce(): Promise<SweepReport> {
    return this.pass(new AbortController().signal);
  }

  /** Passes until `signal` aborts, resting `idleMs` after each. */
  run(signal: AbortSignal): Promise<void> {
    const { idleMs = 60_000, onError, clock = systemClock } = this.options;
    // A pass drains everything that had expired, so the next one always rests first.
    const pass = async (): Promise<boolean> => {
      for (const { error } of (await this.pass(signal)).failed) onError?.(error);
      return false;
    };
    return pollLoop({ pass, idleMs, onError, clock }, signal);
  }

  /** A pass; once `signal` aborts, each step ends after the batch it is in, rather than rest and go on. */
  private async pass(signal: AbortSignal): Promise<SweepReport> {
    const { store } = this;
    const tally: Tally = { tombstoned: 0, deleted: 0, batches: 0 };
    const pace = pacer(this.options.clock ?? systemClock, this.options.maxRecordsPerSecond ?? Infinity, signal);
    const failed: SweepFailure[] = [];
    // A misuse (a batch size that is not a whole number, say) fails every pass alike: it throws at once.
    const attempt = <T>(step: SweepStep, work: () => Promise<T>, otherwise: T): Promise<T> =>
      work().catch((error: unknown) => {
        if (isRetrysafeError(error, 'misuse')) throw error;
        failed.push({ step, error });
        return otherwise;
      });
    await attempt(
      'tombstone',
      () => this.drain(tally, pace, 'tombstoned', (n, from) => store.tombstoneExpired(n, from)),
      0,
    );
    await attempt(
      'delete',
      () => this.drain(tally, pace, 'deleted', (n, from) => store.deleteExpiredTombstones(n, from)),
      0,
    );
    const activityPruned = await attempt(
      'activity',
      () =>
        pruneInBatches((older, limit) => store.pruneActivity(older, limit), {
          olderThanSeconds: this.options.activityRetentionSeconds ?? 14 * 86_400,
          batchSize: this.batchSize,
        }),
      0,
    );
    const tasks: PruneOutcome[] = [];
    for (const task of this.options.tasks ?? []) {
      tasks.push(
        await task.run().then(
          (removed): PruneOutcome => ({ name: task.name, ok: true, removed }),
          (error: unknown): PruneOutcome => ({ name: task.name, ok: false, error }),
        ),
      );
    }
    return extend(tally, { activityPruned, failed, tasks });
  }

  /**
   * Repeats one statement until a batch comes back short (nothing more had
   * expired) or `pace` says the pass was stopped. Each batch walks on from
   * where the one before it stopped.
   */
  private async drain(
    tally: Tally,
    pace: (done: number) => Promise<boolean>,
    field: 'tombstoned' | 'deleted',
    step: (limit: number, from?: string) => Promise<SweepBatch>,
  ): Promise<number> {
    let from: string | undefined;
    for (;;) {
      const { changed, resume } = await step(this.batchSize, from);
      from = resume ?? from;
      tally[field] += changed;
      tally.batches += 1;
      this.options.onBatch?.({ ...tally });
      if (changed < this.batchSize || !(await pace(tally.tombstoned + tally.deleted))) return tally[field];
    }
  }
}

/**
 * Rests, once `done` records are swept, until the pass is no faster than
 * `perSecond` since it began: a batch's records are spread over the time the
 * rate gives them, however fast the batch itself ran. Resolves to false once
 * `signal` has aborted, the rest cut short.
 */
function pacer(clock: Clock, perSecond: number, signal: AbortSignal): (done: number) => Promise<boolean> {
  const began = clock.monotonic();
  return (done) => {
    const early = began + (done * 1000) / perSecond - clock.monotonic();
    return early > 0 ? sleep(clock, early, signal) : Promise.resolve(!signal.aborted);
  };
}
