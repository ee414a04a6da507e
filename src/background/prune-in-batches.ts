import { checkOptions, count, type OptionRules, seconds, STORED_MAX_SECONDS } from '../core/option-rules.js';

export interface PruneOptions {
  /** Rows older than this many seconds go. */
  readonly olderThanSeconds: number;
  /** Rows deleted per statement, so that no statement holds many locks for long. Default 500. */
  readonly batchSize?: number;
}

export const pruneRules = {
  olderThanSeconds: seconds(0, STORED_MAX_SECONDS),
  batchSize: count(1, 100_000),
} as const satisfies OptionRules<PruneOptions>;

/** Deletes one batch of at most `batchSize` rows older than `olderThanSeconds`; resolves to how many went. */
export type PruneBatch = (olderThanSeconds: number, batchSize: number) => Promise<number>;

/**
 * Deletes batch after batch, one short statement each, until a batch comes
 * back short; returns how many went. Options are checked before the first
 * statement, and a misuse throws at once.
 */
export function pruneInBatches(pruneBatch: PruneBatch, options: PruneOptions): Promise<number> {
  const { olderThanSeconds, batchSize } = checkPrune(options);
  return pruneAll(pruneBatch, olderThanSeconds, batchSize);
}

async function pruneAll(pruneBatch: PruneBatch, olderThanSeconds: number, batchSize: number): Promise<number> {
  let total = 0;
  for (;;) {
    const count = await pruneBatch(olderThanSeconds, batchSize);
    total += count;
    if (count < batchSize) return total;
  }
}

function checkPrune(options: PruneOptions): { readonly olderThanSeconds: number; readonly batchSize: number } {
  checkOptions(pruneRules, options, '', ['olderThanSeconds']);
  return { olderThanSeconds: options.olderThanSeconds, batchSize: options.batchSize ?? 500 };
}
