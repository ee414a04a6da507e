import { RetrysafeError } from '../core/errors.js';
import { PRUNE_OUTBOX } from '../postgres/sql/outbox.js';
import type { SqlDatabase } from '../store/sql-client.js';
import { pruneInBatches } from './store-rows.js';

export interface PruneOptions {
  /** Rows older than this many seconds go. */
  readonly olderThanSeconds: number;
  /** Rows deleted per statement, so that no statement holds many locks for long. Default 500. */
  readonly batchSize?: number;
}

/**
 * Deletes delivered outbox messages whose delivery is older than the
 * retention, in small batches. Pending and dead messages are never pruned.
 * Returns how many were deleted.
 */
export function pruneOutbox<Tx>(database: SqlDatabase<Tx>, options: PruneOptions): Promise<number> {
  return pruneInBatches(database, PRUNE_OUTBOX, checkPrune(options));
}

export function checkPrune(options: PruneOptions): { readonly olderThanSeconds: number; readonly batchSize: number } {
  const batchSize = options.batchSize ?? 500;
  if (!(options.olderThanSeconds >= 0)) throw new RetrysafeError('misuse', 'olderThanSeconds must be zero or more.');
  if (!Number.isInteger(batchSize) || batchSize < 1) throw new RetrysafeError('misuse', 'batchSize must be a positive integer.');
  return { olderThanSeconds: options.olderThanSeconds, batchSize };
}
