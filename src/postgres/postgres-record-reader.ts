import type { RecordReader } from '../store/record-reader.js';
import type { SqlDatabase } from '../store/sql-client.js';
import { READ_RECORD, readRecordValues } from './sql/read-record.js';
import { type RecordRow, toRecord } from './sql/record-row.js';
import { storeRows } from './store-rows.js';

/** Reads a record on PostgreSQL: one statement, no transaction. */
export function recordReader(database: Pick<SqlDatabase<unknown>, 'query'>): RecordReader {
  return {
    async read(identity) {
      const [row] = await storeRows<RecordRow>(database, READ_RECORD, readRecordValues(identity));
      return row === undefined ? undefined : toRecord(identity, row);
    },
  };
}
