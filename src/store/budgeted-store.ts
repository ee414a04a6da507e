import { type Clock, systemClock } from '../core/clock.js';
import { decorate } from './decorate.js';
import type { OperationStore } from './operation-store.js';
import { StoreClock, withinStoreTimeout } from './store-clock.js';

/** Runs the application's work inside a call: the budget stops while it runs and starts again when it ends. */
export type InWork = <W>(work: () => Promise<W>) => Promise<W>;

/**
 * Bounds every call of a store seam by `budgetMs`: past it the call rejects
 * with `store-unavailable` and whatever it would have done later is dropped.
 * The budget is applied here, once, over the seam, so a call added later has
 * it too. `overrides` replace the calls that hand the application's work a
 * transaction (`aroundWork`), which only the store's parts may bound.
 */
export function budgeted<S extends object>(
  store: S,
  budgetMs: number,
  overrides: Partial<S> = {},
  clock: Clock = systemClock,
): S {
  return decorate(store, {
    around: (_method, call) => withinStoreTimeout(Promise.resolve(call()), budgetMs, clock),
    overrides,
  });
}

/**
 * The budgets of one call that runs the application's work inside it: the
 * opening (BEGIN, the claim, the lock) gets `openingMs`, the work none, and
 * what follows it (the completion, COMMIT or ROLLBACK) `budgetMs`, whether
 * the work returned or threw. Work reached after the opening ran out never
 * runs.
 */
export function aroundWork<T>(
  budgetMs: number,
  openingMs: number,
  call: (inWork: InWork) => Promise<T>,
  by: Clock = systemClock,
): Promise<T> {
  const clock = new StoreClock(by);
  clock.enterStore(openingMs);
  return clock.race(
    call(async (work) => {
      clock.leaveStore();
      try {
        return await work();
      } finally {
        clock.enterStore(budgetMs);
      }
    }),
  );
}

/**
 * An operation store whose every call has the store budget (`storeTimeoutMs`),
 * as `idempotency()` hands it to the modes and workers. An atomic claim also
 * gets the request's lock wait; a local step's transaction (`checkpointWith`)
 * is bounded whole, its writes included, as a short write under the lease.
 */
export function budgetedStore<Tx>(
  store: OperationStore<Tx>,
  budgetMs: number,
  clock: Clock = systemClock,
): OperationStore<Tx> {
  return budgeted(
    store,
    budgetMs,
    {
      atomic: (request, work, taken) =>
        aroundWork(
          budgetMs,
          budgetMs + request.lockTimeoutMs,
          (inWork) => store.atomic(request, (opened) => inWork(() => work(opened)), taken),
          clock,
        ),
      transaction: (work) => budgetedTransaction(budgetMs, (inner) => store.transaction(inner), work, clock),
    },
    clock,
  );
}

/** A `transaction(work)` of any seam, with the store's parts bounded and the work not. */
export function budgetedTransaction<Tx, T>(
  budgetMs: number,
  transaction: (work: (tx: Tx) => Promise<T>) => Promise<T>,
  work: (tx: Tx) => Promise<T>,
  clock: Clock = systemClock,
): Promise<T> {
  return aroundWork(budgetMs, budgetMs, (inWork) => transaction((tx) => inWork(() => work(tx))), clock);
}
