import { type Clock, systemClock, type TimerHandle, unrefTimer } from '../core/clock.js';
import type { AttemptEnd, Observer, RetrysafeEvent } from '../core/events.js';
import { checkOptions, count, milliseconds, type OptionRules } from '../core/option-rules.js';
import type { ActivityCount, ActivityKind, ActivityStore } from '../store/activity-store.js';

export interface ActivityOptions {
  /** How often a process adds what it counted to the activity table, in ms; a crash loses at most this much. Default 10000. */
  readonly flushIntervalMs?: number;
  /** Most buckets kept while the store refuses them; past it the oldest hours are dropped. Default 10000. */
  readonly maxBuckets?: number;
  /** Told about every failed flush; its counts are kept for the next. */
  readonly onError?: (error: unknown) => void;
}

/** The flush is a timer. */
export const activityRules = {
  flushIntervalMs: milliseconds(1),
  maxBuckets: count(1, 10_000_000),
} as const satisfies OptionRules<ActivityOptions>;

/** The kind each event counts as, if it counts: the console's charts. */
const KINDS: Partial<Record<RetrysafeEvent['type'], ActivityKind>> = {
  claimed: 'new',
  replayed: 'replay',
  'fingerprint-mismatch': 'mismatch',
  conflict: 'conflict',
  unknown: 'unknown',
};

/** How attempts end that the console counts as failed: their answer was not kept. */
const FAILED: ReadonlySet<AttemptEnd> = new Set<AttemptEnd>(['threw', 'not-stored', 'released']);

/** The operation and kind an event counts as, if it counts. */
function counted(event: RetrysafeEvent): { readonly operation: string; readonly kind: ActivityKind } | undefined {
  if (event.type === 'attempt-ended')
    return FAILED.has(event.outcome) ? { operation: event.operation, kind: 'failed' } : undefined;
  const kind = KINDS[event.type];
  return kind === undefined || event.identity === undefined ? undefined : { operation: event.identity.operation, kind };
}

const HOUR_MS = 3_600_000;

/** A count while this process holds it. */
type Bucket = { -readonly [K in keyof ActivityCount]: ActivityCount[K] };

/**
 * Counts answers per hour, operation and kind in this process, as an observer
 * of the events the requests already announce, and adds them to the store
 * every `flushIntervalMs` in one statement: a request never waits for it and
 * writes nothing more. A failed flush keeps its counts for the next one.
 */
export class ActivityRecorder {
  /** Counts not yet added, by `hour|operation|kind`; each bucket's `n` grows in place, so a counted answer allocates nothing once its bucket exists. */
  private pending = new Map<string, Bucket>();
  private timer: TimerHandle | undefined;
  private flushing: Promise<void> | undefined;
  private readonly intervalMs: number;
  private readonly maxBuckets: number;

  constructor(
    private readonly store: Pick<ActivityStore, 'addActivity'>,
    private readonly options: ActivityOptions = {},
    private readonly clock: Clock = systemClock,
  ) {
    checkOptions(activityRules, options, 'activity.');
    this.intervalMs = options.flushIntervalMs ?? 10_000;
    this.maxBuckets = options.maxBuckets ?? 10_000;
  }

  /** The observer to give `idempotency({ observers })`: counts, and schedules a flush. */
  readonly observer: Observer = (event) => {
    const count = counted(event);
    if (count === undefined) return;
    this.add(Math.floor(this.clock.now() / HOUR_MS) * HOUR_MS, count.operation, count.kind, 1);
    this.schedule();
  };

  /** Adds what was counted so far; resolves when it is stored or kept again after a failure (never rejects). */
  flush(): Promise<void> {
    this.flushing ??= this.send().finally(() => {
      this.flushing = undefined;
      this.schedule();
    });
    return this.flushing;
  }

  /** Stops the timer and adds everything counted; for a clean shutdown. Counts announced later are flushed by a later call. */
  async close(): Promise<void> {
    this.stopTimer();
    await this.flushing;
    await this.flush();
    this.stopTimer();
  }

  private stopTimer(): void {
    if (this.timer !== undefined) this.clock.clearTimeout(this.timer);
    this.timer = undefined;
  }

  private async send(): Promise<void> {
    const batch = this.pending;
    if (batch.size === 0) return;
    this.pending = new Map();
    try {
      await this.store.addActivity([...batch.values()]);
    } catch (error) {
      for (const count of batch.values()) this.add(count.hour.getTime(), count.operation, count.kind, count.n);
      this.bound();
      this.options.onError?.(error);
    }
  }

  private add(hourMs: number, operation: string, kind: ActivityKind, n: number): void {
    const key = `${hourMs}|${operation}|${kind}`;
    const held = this.pending.get(key);
    if (held === undefined) this.pending.set(key, { hour: new Date(hourMs), operation, kind, n });
    else held.n += n;
  }

  /** Keeps the newest `maxBuckets` buckets: memory stays bounded however long the store is down. */
  private bound(): void {
    if (this.pending.size <= this.maxBuckets) return;
    const kept = [...this.pending]
      .sort(([, a], [, b]) => b.hour.getTime() - a.hour.getTime())
      .slice(0, this.maxBuckets);
    this.pending = new Map(kept);
  }

  private schedule(): void {
    if (this.timer !== undefined || this.flushing !== undefined || this.pending.size === 0) return;
    const flush = (): void => {
      this.timer = undefined;
      void this.flush();
    };
    // Counting never keeps a process alive: a clean shutdown calls close().
    this.timer = unrefTimer(this.clock.setTimeout(flush, this.intervalMs));
  }
}
