import type { OperationIdentity } from '../core/identity.js';
import type { OperationRecord } from '../core/record.js';

/** Reads one record outside any transaction: read-first replays, operators' tools. */
export interface RecordReader {
  /** The record that holds `identity`, as the store's clock sees it now; undefined when there is none. */
  read(identity: OperationIdentity): Promise<OperationRecord | undefined>;
}
