import type { SqlDatabase } from '../store/sql-client.js';
import type { StoredWebhookEvent, WebhookStore } from '../store/webhook-store.js';
import {
  MARK_WEBHOOK_PROCESSED,
  NEXT_WEBHOOK_EVENT,
  PARK_WEBHOOK_EVENT,
  PRUNE_WEBHOOK_EVENTS,
  RECORD_WEBHOOK_EVENT,
  RESCHEDULE_WEBHOOK_EVENT,
} from './sql/webhooks.js';
import { sqlState } from './sqlstate.js';
import { pruneBatch, storeRows } from './store-rows.js';
import { storePart } from './transaction.js';

interface EventRow {
  readonly id: string;
  readonly payload: unknown;
  readonly sent_at: Date;
  readonly received_at: Date;
  readonly attempts: number;
}

/** Recorded webhooks (`retrysafe_webhook_events`) on PostgreSQL or PGlite, through any data layer. */
export function webhookStore<Tx>(database: SqlDatabase<Tx>): WebhookStore<Tx> {
  return {
    async record(event) {
      try {
        const { rows } = await database.query(RECORD_WEBHOOK_EVENT, [
          event.receiver,
          event.id,
          event.payloadText,
          event.sentAtSeconds,
        ]);
        return rows.length > 0 ? 'recorded' : 'duplicate';
      } catch (error) {
        // Class 22 is bad data (JSON that jsonb refuses, such as \u0000): the same bytes will never store.
        if (sqlState(error)?.startsWith('22')) return 'unstorable';
        throw error;
      }
    },
    async next(tx, receiver, skip) {
      const [row] = (await storePart(() => database.runner(tx).query<EventRow>(NEXT_WEBHOOK_EVENT, [receiver, skip])))
        .rows;
      return row === undefined ? undefined : toEvent(row);
    },
    async markProcessed(tx, receiver, id) {
      await storePart(() => database.runner(tx).query(MARK_WEBHOOK_PROCESSED, [receiver, id]));
    },
    async reschedule(receiver, id, delaySeconds, error) {
      await storeRows(database, RESCHEDULE_WEBHOOK_EVENT, [receiver, id, delaySeconds, error]);
    },
    async park(receiver, id, error) {
      await storeRows(database, PARK_WEBHOOK_EVENT, [receiver, id, error]);
    },
    pruneBatch: (olderThanSeconds, batchSize) =>
      pruneBatch(database, PRUNE_WEBHOOK_EVENTS, olderThanSeconds, batchSize),
  };
}

function toEvent(row: EventRow): StoredWebhookEvent {
  return { id: row.id, payload: row.payload, sentAt: row.sent_at, receivedAt: row.received_at, attempts: row.attempts };
}
