import type { OperationIdentity } from '../../core/identity.js';
import { statement } from './statement.js';
import { ids, recordColumns } from './record-row.js';

/** One record by its identity, outside a transaction or after a claim found it. $1 tenant, $2 operation, $3 key. */
export const READ_RECORD = statement(
  'retrysafe_read_record',
  `
SELECT ${recordColumns('o')}
FROM retrysafe_operations AS o
WHERE o.tenant = $1 AND o.operation = $2 AND o.key = $3`,
);

/** The values of `READ_RECORD`. */
export function readRecordValues(identity: OperationIdentity): unknown[] {
  return ids(identity);
}
