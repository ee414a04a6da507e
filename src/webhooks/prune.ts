import { PRUNE_WEBHOOK_EVENTS } from '../postgres/sql/inbox.js';
import { checkPrune, type PruneOptions } from '../outbox/prune.js';
import { pruneInBatches } from '../outbox/store-rows.js';
import type { SqlDatabase } from '../store/sql-client.js';

/**
 * Deletes processed webhook events older than the retention, in small
 * batches. A delivery of a pruned event is recorded again, and the inbox
 * (kept at least as long) keeps it from being processed twice.
 */
export function pruneWebhookEvents<Tx>(database: SqlDatabase<Tx>, options: PruneOptions): Promise<number> {
  return pruneInBatches(database, PRUNE_WEBHOOK_EVENTS, checkPrune(options));
}
