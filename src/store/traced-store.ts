import type { Tracing } from '../core/tracing.js';
import { measuredStore } from './measured-store.js';
import type { OperationStore } from './operation-store.js';

/** Wraps a store so that every call is a span, child of the attempt's. */
export function tracedStore<Tx>(store: OperationStore<Tx>, tracing: Tracing): OperationStore<Tx> {
  return measuredStore(store, (call) => {
    const span = tracing.start(`retrysafe store ${call}`, { 'retrysafe.store.call': call });
    return (error) => {
      if (error !== undefined) span.fail(error);
      span.end();
    };
  });
}
