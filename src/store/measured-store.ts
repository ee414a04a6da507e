import { decorate } from './decorate.js';
import type { OperationStore } from './operation-store.js';

/**
 * Starts measuring one store call, by a fixed name; the returned function
 * ends it, with the error when the call failed.
 */
export type StoreCallMeter = (call: string) => (error?: unknown) => void;

/**
 * Wraps a store so that every call is measured by `meter`: timed for
 * metrics, or traced. Every method is measured under its name in kebab case
 * (`claim-lease`, `take-over`, …), a method added later included. Where a call
 * runs the application's own work inside a transaction, only the store's part
 * is measured: `claim` (BEGIN and the claim), `complete`, and `commit` for
 * atomic requests; `begin` and `checkpoint-lock` for the others.
 */
export function measuredStore<Tx>(store: OperationStore<Tx>, meter: StoreCallMeter): OperationStore<Tx> {
  const measured = async <T>(call: string, run: () => T): Promise<Awaited<T>> => {
    const end = meter(call);
    try {
      const value = await run();
      end();
      return value;
    } catch (error) {
      end(error);
      throw error;
    }
  };
  /** Measures `call` up to the moment the store hands over to `work`, or to its failure before that. */
  const untilWork = async <T>(call: string, run: (enter: () => void) => Promise<T>): Promise<T> => {
    const end = meter(call);
    let entered = false;
    const enter = (): void => {
      entered = true;
      end();
    };
    try {
      const value = await run(enter);
      if (!entered) end();
      return value;
    } catch (error) {
      if (!entered) end(error);
      throw error;
    }
  };

  return decorate(store, {
    around: (method, call) => measured(kebabCase(method), call),
    overrides: {
      atomic: (request, work, taken) => {
        let endCommit: ((error?: unknown) => void) | undefined;
        return untilWork('claim', async (enter) => {
          try {
            const value = await store.atomic(
              request,
              async (transaction) => {
                enter();
                const settlement = await work(transaction);
                // The completion is handed over in the work's settlement; the record is written with the commit.
                if (settlement.commit) meter('complete')();
                endCommit = meter('commit');
                return settlement;
              },
              taken,
            );
            endCommit?.();
            return value;
          } catch (error) {
            endCommit?.(error);
            throw error;
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
      checkpointWith: (lease, step, work) =>
        untilWork('checkpoint-lock', (enter) =>
          store.checkpointWith(lease, step, (tx) => {
            enter();
            return work(tx);
          }),
        ),
    },
  });
}

function kebabCase(name: string): string {
  return name.replace(/[A-Z]/g, (letter) => `-${letter.toLowerCase()}`);
}
