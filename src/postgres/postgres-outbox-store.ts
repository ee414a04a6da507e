import type { ClaimedMessage, DeadLetter, OutboxBacklog, OutboxMessage, OutboxStore } from '../store/outbox-store.js';
import type { SqlDatabase } from '../store/sql-client.js';
import {
  BACKLOG,
  CLAIM,
  DEAD_LETTERS,
  ENQUEUE,
  MARK_DELIVERED,
  PARK,
  PARK_ABANDONED,
  PRUNE_OUTBOX,
  RESCHEDULE,
  RETRY_DEAD_LETTER,
} from './sql/outbox.js';
import { pruneBatch, storeRows } from './store-rows.js';
import { extend } from '../core/extend.js';

interface ClaimedRow {
  readonly id: string;
  readonly topic: string;
  readonly headers: Record<string, string>;
  readonly payload: unknown;
  readonly attempts: number;
}

interface DeadLetterRow extends ClaimedRow {
  readonly last_error: string | null;
  readonly created_at: Date;
  readonly parked_at: Date;
}

interface BacklogRow {
  readonly pending: number;
  readonly dead: number;
  readonly oldest_pending_seconds: number;
}

/** The transactional outbox (`retrysafe_outbox`) on PostgreSQL or PGlite, through any data layer. */
export function outboxStore<Tx>(database: SqlDatabase<Tx>): OutboxStore<Tx> {
  const rows = <Row>(text: string, values: readonly unknown[]) => storeRows<Row>(database, text, values);
  return {
    enqueue: (tx, message) => enqueueOn(database.runner(tx), message),
    async parkAbandoned(claim) {
      return (await rows(PARK_ABANDONED, [claim.maxAttempts, claim.batchSize, claim.topics])).length;
    },
    async claim(claim) {
      const claimed = await rows<ClaimedRow>(CLAIM, [
        claim.batchSize,
        claim.leaseSeconds,
        claim.token,
        claim.topics,
        claim.maxAttempts,
      ]);
      return claimed.map(toClaimed);
    },
    async markDelivered(id) {
      await rows(MARK_DELIVERED, [id]);
    },
    async reschedule(id, token, delaySeconds, error) {
      await rows(RESCHEDULE, [id, token, delaySeconds, error]);
    },
    async park(id, token, error) {
      await rows(PARK, [id, token, error]);
    },
    async deadLetters(limit, topic) {
      return (await rows<DeadLetterRow>(DEAD_LETTERS, [limit, topic])).map(toDeadLetter);
    },
    async retryDeadLetter(id) {
      return (await rows(RETRY_DEAD_LETTER, [id])).length > 0;
    },
    async backlog(): Promise<OutboxBacklog> {
      const [row] = await rows<BacklogRow>(BACKLOG, []);
      return {
        pending: row?.pending ?? 0,
        dead: row?.dead ?? 0,
        oldestPendingSeconds: row?.oldest_pending_seconds ?? 0,
      };
    },
    pruneBatch: (olderThanSeconds, batchSize) => pruneBatch(database, PRUNE_OUTBOX, olderThanSeconds, batchSize),
  };
}

/** A transaction that runs statements itself: node-postgres' client, PGlite's transaction, a data layer's runner. */
export interface QueryableTransaction {
  query(text: string, values?: unknown[]): Promise<unknown>;
}

/** The outbox's `enqueue` in a transaction that runs statements itself, for which no database is at hand. */
export const queryableOutbox: Pick<OutboxStore<QueryableTransaction>, 'enqueue'> = { enqueue: enqueueOn };

/**
 * Adds a message in the caller's transaction. Its failure is left as it came:
 * it fails the caller's transaction, under the caller's error handling.
 */
async function enqueueOn(tx: QueryableTransaction, message: OutboxMessage): Promise<void> {
  await tx.query(ENQUEUE, [
    message.id,
    message.topic,
    JSON.stringify(message.headers),
    JSON.stringify(message.payload),
  ]);
}

function toClaimed(row: ClaimedRow): ClaimedMessage {
  return { id: row.id, topic: row.topic, headers: row.headers, payload: row.payload, attempts: row.attempts };
}

function toDeadLetter(row: DeadLetterRow): DeadLetter {
  return extend(toClaimed(row), { lastError: row.last_error, createdAt: row.created_at, parkedAt: row.parked_at });
}
