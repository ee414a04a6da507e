import { unavailable } from '../postgres/transaction.js';
import type { SqlDatabase } from '../store/sql-client.js';

/** Runs one statement outside any transaction; a failure becomes `RetrysafeError('store-unavailable')`. */
export async function storeRows<Row>(database: Pick<SqlDatabase<unknown>, 'query'>, text: string, values: readonly unknown[]): Promise<Row[]> {
  try {
    return (await database.query<Row>(text, values)).rows;
  } catch (error) {
    throw unavailable(error);
  }
}

/** Deletes in batches of `batchSize`, one short statement each, until a batch comes back short; returns how many went. */
export async function pruneInBatches(
  database: Pick<SqlDatabase<unknown>, 'query'>,
  statement: string,
  options: { readonly olderThanSeconds: number; readonly batchSize: number },
): Promise<number> {
  let total = 0;
  for (;;) {
    const [row] = await storeRows<{ count: number }>(database, statement, [options.olderThanSeconds, options.batchSize]);
    const count = row?.count ?? 0;
    total += count;
    if (count < options.batchSize) return total;
  }
}
