import { measuredStore } from '../store/measured-store.js';
import type { OperationStore } from '../store/operation-store.js';
import { ExposedHistogram, type RegistryLike } from './exposed-metric.js';
import { RetrysafeError } from '../core/errors.js';
import { numberProblem, seconds } from '../core/option-rules.js';

export interface TimedStoreOptions {
  /** Prepended to the metric name. Default `retrysafe_`. */
  readonly prefix?: string;
  /** Upper bounds of the histogram, in seconds. */
  readonly buckets?: readonly number[];
}

export const defaultStoreBuckets: readonly number[] = [
  0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5,
];

/** A bound is a store call's duration, in seconds: above 0, at most an hour. */
export const bucketRule = seconds(0.000_001, 3600);

/** Bounds a histogram can use: each within `bucketRule`, each above the one before. */
function checkBuckets(buckets: readonly number[]): readonly number[] {
  buckets.forEach((bound, i) => {
    const problem =
      numberProblem(`buckets[${i}]`, bound, bucketRule) ??
      (i > 0 && bound <= buckets[i - 1]! ? `buckets must rise, got ${buckets[i - 1]} then ${bound}.` : undefined);
    if (problem !== undefined) throw new RetrysafeError('misuse', problem);
  });
  return buckets;
}

/** Wraps a store so that its calls are timed; one timer serves every store of an application. */
export type StoreTimer = <Tx>(store: OperationStore<Tx>) => OperationStore<Tx>;

/**
 * Registers `retrysafe_store_call_seconds` and returns the wrapper that fills
 * it, by `call`: a fixed set of names, one per store statement. Where a call
 * runs the application's own work inside a transaction, only the store's part
 * is timed: `claim` (BEGIN and the claim), `complete`, and `commit` for atomic
 * requests; `begin` and `checkpoint-lock` for the others. Failed calls are
 * timed too.
 */
export function storeTimer(registry: RegistryLike, options: TimedStoreOptions = {}): StoreTimer {
  const histogram = new ExposedHistogram(
    `${options.prefix ?? 'retrysafe_'}store_call_seconds`,
    'Time spent in operation store calls, by call.',
    checkBuckets(options.buckets ?? defaultStoreBuckets),
  ).register(registry);
  return (store) => timedStore(store, histogram);
}

function timedStore<Tx>(store: OperationStore<Tx>, histogram: ExposedHistogram): OperationStore<Tx> {
  return measuredStore(store, (call) => {
    const started = performance.now();
    // Failed calls are timed too.
    return () => histogram.observe({ call }, (performance.now() - started) / 1000);
  });
}
