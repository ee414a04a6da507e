import type { OperationStore } from '../../src/store/operation-store.js';

/**
 * The store with its single-record read hidden from atomic mode, so that every
 * keyed request opens the transaction and claims first, as retrysafe did
 * before it answered finished operations from one read. The bench measures
 * both: the read saves a replay two round trips and costs a new key one.
 */
export function claimFirst<Tx>(store: OperationStore<Tx>): OperationStore<Tx> {
  return { ...store, read: () => Promise.resolve(undefined) };
}
