import type { OperationStore } from '../store/operation-store.js';
import { ExposedHistogram, type RegistryLike } from './exposed-metric.js';

export interface TimedStoreOptions {
  /** Prepended to the metric name. Default `retrysafe_`. */
  readonly prefix?: string;
  /** Upper bounds of the histogram, in seconds. */
  readonly buckets?: readonly number[];
}

export const defaultStoreBuckets: readonly number[] = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];

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
    options.buckets ?? defaultStoreBuckets,
  ).register(registry);
  return (store) => timedStore(store, histogram);
}

function timedStore<Tx>(store: OperationStore<Tx>, histogram: ExposedHistogram): OperationStore<Tx> {
  const since = (call: string, started: number): void => histogram.observe({ call }, (performance.now() - started) / 1000);
  const timed = async <T>(call: string, run: () => Promise<T>): Promise<T> => {
    const started = performance.now();
    try {
      return await run();
    } finally {
      since(call, started);
    }
  };
  /** Times `call` up to the moment the store hands over to `work`, or to its failure before that. */
  const untilWork = async <T>(call: string, run: (enter: () => void) => Promise<T>): Promise<T> => {
    const started = performance.now();
    let entered = false;
    const enter = (): void => {
      entered = true;
      since(call, started);
    };
    try {
      return await run(enter);
    } finally {
      if (!entered) since(call, started);
    }
  };

  return {
    atomic: (request, work) => {
      let settled: number | undefined;
      return untilWork('claim', async (enter) => {
        try {
          return await store.atomic(request, async (transaction) => {
            enter();
            const settlement = await work({ ...transaction, complete: (completion) => timed('complete', () => transaction.complete(completion)) });
            settled = performance.now();
            return settlement;
          });
        } finally {
          if (settled !== undefined) since('commit', settled);
        }
      });
    },
    transaction: (work) =>
      untilWork('begin', (enter) =>
        store.transaction((tx) => {
          enter();
          return work(tx);
        }),
      ),
    checkpointWith: (lease, step, leaseSeconds, work) =>
      untilWork('checkpoint-lock', (enter) =>
        store.checkpointWith(lease, step, leaseSeconds, (tx) => {
          enter();
          return work(tx);
        }),
      ),
    claimLease: (request) => timed('claim-lease', () => store.claimLease(request)),
    takeOver: (identity, seen, owner, leaseSeconds) => timed('take-over', () => store.takeOver(identity, seen, owner, leaseSeconds)),
    renew: (lease, leaseSeconds) => timed('renew', () => store.renew(lease, leaseSeconds)),
    checkpoint: (lease, step, result, leaseSeconds) => timed('checkpoint', () => store.checkpoint(lease, step, result, leaseSeconds)),
    steps: (lease) => timed('steps', () => store.steps(lease)),
    finish: (lease, completion) => timed('finish', () => store.finish(lease, completion)),
    abandon: (lease) => timed('abandon', () => store.abandon(lease)),
    release: (lease, delaySeconds) => timed('release', () => store.release(lease, delaySeconds)),
    markUnknown: (lease, reason) => timed('mark-unknown', () => store.markUnknown(lease, reason)),
    expiredLeases: (limit, operations) => timed('expired-leases', () => store.expiredLeases(limit, operations)),
    resolveUnknown: (identity, completion, reason) => timed('resolve-unknown', () => store.resolveUnknown(identity, completion, reason)),
    read: (identity) => timed('read', () => store.read(identity)),
    transactionTimeoutMs: store.transactionTimeoutMs,
  };
}
