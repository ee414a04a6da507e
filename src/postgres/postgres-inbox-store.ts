import type { InboxStore } from '../store/inbox-store.js';
import type { SqlDatabase } from '../store/sql-client.js';
import { PRUNE_INBOX, RECORD_MESSAGE } from './sql/inbox.js';
import { pruneBatch } from './store-rows.js';
import { plainTransaction, storePart } from './transaction.js';

/** The consumer inbox (`retrysafe_inbox`) on PostgreSQL or PGlite, through any data layer. */
export function inboxStore<Tx>(database: SqlDatabase<Tx>): InboxStore<Tx> {
  return {
    transaction: (work) => plainTransaction(database, work),
    async record(tx, key) {
      const { rows } = await storePart(() =>
        database.runner(tx).query(RECORD_MESSAGE, [key.consumer, key.generation, key.messageId]),
      );
      return rows.length > 0;
    },
    pruneBatch: (olderThanSeconds, batchSize) => pruneBatch(database, PRUNE_INBOX, olderThanSeconds, batchSize),
  };
}
