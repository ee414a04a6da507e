import { pruneInBatches, type PruneOptions } from '../background/prune-in-batches.js';
import { outboxStore } from '../postgres/postgres-outbox-store.js';
import type { SqlDatabase } from '../store/sql-client.js';

export type { PruneOptions } from '../background/prune-in-batches.js';

/**
 * Deletes delivered outbox messages whose delivery is older than the
 * retention, in small batches. Pending and dead messages are never pruned.
 * Returns how many were deleted.
 */
export function pruneOutbox<Tx>(database: SqlDatabase<Tx>, options: PruneOptions): Promise<number> {
  return pruneInBatches(outboxStore(database).pruneBatch, options);
}
