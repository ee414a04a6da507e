import type { ActivityStore } from './activity-store.js';
import type { AtomicStore } from './atomic-store.js';
import type { LeaseStore } from './lease-store.js';
import type { UnknownActions } from './operator-store.js';
import type { RecordReader } from './record-reader.js';

/**
 * The whole seam between the core and a database, as `postgresStore()`
 * returns it: every mode's statements, the reader and the operators' actions
 * on unknown operations. Callers ask for the part they use (`AtomicStore`,
 * `LeaseStore`, `RecordReader`, `UnknownActions`); decorators
 * wrap the whole with `decorate()`. A store throws only
 * `RetrysafeError('store-unavailable')` for its own failures; errors thrown by
 * the application's work pass through unchanged after the transaction is
 * rolled back.
 */
export interface OperationStore<Tx> extends AtomicStore<Tx>, LeaseStore<Tx>, RecordReader, UnknownActions {
  /**
   * Where the hourly activity counts of the console go, when the store keeps
   * them: `idempotency()` then counts in memory and adds them every few
   * seconds, never on the request path.
   */
  readonly activityCounts?: ActivityStore;
}
