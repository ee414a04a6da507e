import { checkOptions, milliseconds, type OptionRules } from '../core/option-rules.js';
import { pollLoop } from '../background/poll-loop.js';
import { pruneInBatches, pruneRules } from '../background/prune-in-batches.js';
import type { MaintenanceStore } from '../store/maintenance-store.js';
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

/** What one pass did. */
export interface SweepReport extends SweepProgress {
  /** Hourly activity buckets deleted past `activityRetentionSeconds`. */
  readonly activityPruned: number;
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
  /** Called after every batch, for progress lines. */
  readonly onBatch?: (progress: SweepProgress) => void;
  /** `run`: told about failed passes, which are retried on the next pass. */
  readonly onError?: (error: unknown) => void;
}

export const sweeperRules = {
  storeTimeoutMs: milliseconds(1),
  batchSize: pruneRules.batchSize,
  activityRetentionSeconds: pruneRules.olderThanSeconds,
  idleMs: milliseconds(1),
} as const satisfies OptionRules<SweeperOptions>;

type Tally = { -readonly [K in keyof SweepProgress]: SweepProgress[K] };

/**
 * Applies retention: turns expired responses into tombstones, then deletes
 * expired tombstones and the hourly activity counts past their retention,
 * batch by batch until none is left, then runs the prune tasks. Expiry is
 * decided here, never when a request reads a record.
 */
export class Sweeper {
  private readonly batchSize: number;
  private readonly store: MaintenanceStore;

  constructor(private readonly options: SweeperOptions) {
    checkOptions(sweeperRules, options);
    this.batchSize = options.batchSize ?? 500;
    this.store = budgeted(options.store, options.storeTimeoutMs ?? defaultStoreTimeoutMs);
  }

  /** One pass over everything that has expired; tests and the command line call this. */
  async runOnce(): Promise<SweepReport> {
    const { store } = this;
    const tally: Tally = { tombstoned: 0, deleted: 0, batches: 0 };
    await this.drain(tally, 'tombstoned', (limit) => store.tombstoneExpired(limit));
    await this.drain(tally, 'deleted', (limit) => store.deleteExpiredTombstones(limit));
    const activityPruned = await pruneInBatches((older, limit) => store.pruneActivity(older, limit), {
      olderThanSeconds: this.options.activityRetentionSeconds ?? 14 * 86_400,
      batchSize: this.batchSize,
    });
    const tasks: PruneOutcome[] = [];
    for (const task of this.options.tasks ?? []) {
      tasks.push(
        await task.run().then(
          (removed): PruneOutcome => ({ name: task.name, ok: true, removed }),
          (error: unknown): PruneOutcome => ({ name: task.name, ok: false, error }),
        ),
      );
    }
    return extend(tally, { activityPruned, tasks });
  }

  /** Passes until `signal` aborts, resting `idleMs` after each. */
  run(signal: AbortSignal): Promise<void> {
    const { idleMs = 60_000, onError } = this.options;
    // A pass drains everything that had expired, so the next one always rests first.
    const pass = async (): Promise<boolean> => {
      await this.runOnce();
      return false;
    };
    return pollLoop({ pass, idleMs, onError }, signal);
  }

  /** Repeats one statement until a batch comes back short: then nothing more had expired. */
  private async drain(
    tally: Tally,
    field: 'tombstoned' | 'deleted',
    step: (limit: number) => Promise<number>,
  ): Promise<void> {
    for (;;) {
      const changed = await step(this.batchSize);
      tally[field] += changed;
      tally.batches += 1;
      this.options.onBatch?.({ ...tally });
      if (changed < this.batchSize) return;
    }
  }
}
