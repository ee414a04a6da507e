import type { RecordReader } from '../store/record-reader.js';
import type { SqlDatabase } from '../store/sql-client.js';
import { READ_RECORD, readRecordValues } from './sql/read-record.js';
import { type RecordRow, toRecord } from './sql/record-row.js';
import { storeRows } from './store-rows.js';

/** Reads a record on PostgreSQL: one statement, no transaction. */
export function recordReader(database: Pick<SqlDatabase<unknown>, 'query'>): RecordReader {
  return {
    // Chained, not awaited: a replay's one read makes one promise here.
    read: (identity) =>
      storeRows<RecordRow>(database, READ_RECORD, readRecordValues(identity)).then(([row]) =>
        row === undefined ? undefined : toRecord(identity, row),
      ),
  };
}
