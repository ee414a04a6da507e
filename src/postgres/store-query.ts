import { RetrysafeError } from '../core/errors.js';
import type { SqlDatabase, Statement } from '../store/sql-client.js';

/** One statement outside any transaction; a failure of the database becomes the store's own error. */
export async function queryStore<Row>(database: Pick<SqlDatabase<unknown>, 'query'>, statement: Statement, values: readonly unknown[]): Promise<Row[]> {
  try {
    return (await database.query<Row>(statement, values)).rows;
  } catch (error) {
    throw new RetrysafeError('store-unavailable', 'The operation store failed.', { cause: error });
  }
}
