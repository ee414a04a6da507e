import type { SqlDatabase, Statement } from '../store/sql-client.js';
import { unavailable } from './transaction.js';

/** Runs one statement outside any transaction; a failure becomes `RetrysafeError('store-unavailable')`. */
export async function storeRows<Row>(database: Pick<SqlDatabase<unknown>, 'query'>, text: string | Statement, values: readonly unknown[]): Promise<Row[]> {
  try {
    return (await database.query<Row>(text, values)).rows;
  } catch (error) {
    throw unavailable(error);
  }
}

/** Runs one batch of a prune statement (`$1` seconds, `$2` batch size, one `count` back); how many rows went. */
export async function pruneBatch(database: Pick<SqlDatabase<unknown>, 'query'>, text: string, olderThanSeconds: number, batchSize: number): Promise<number> {
  const [row] = await storeRows<{ count: number }>(database, text, [olderThanSeconds, batchSize]);
  return row?.count ?? 0;
}
