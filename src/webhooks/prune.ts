import { pruneInBatches, type PruneOptions } from '../background/prune-in-batches.js';
import { webhookStore } from '../postgres/postgres-webhook-store.js';
import type { SqlDatabase } from '../store/sql-client.js';

/**
 * Deletes processed webhook events older than the retention, in small
 * batches. A delivery of a pruned event is recorded again, and the inbox
 * (kept at least as long) keeps it from being processed twice.
 */
export function pruneWebhookEvents<Tx>(database: SqlDatabase<Tx>, options: PruneOptions): Promise<number> {
  return pruneInBatches(webhookStore(database).pruneBatch, options);
}
