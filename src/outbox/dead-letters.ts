import { DEAD_LETTERS, RETRY_DEAD_LETTER } from '../postgres/sql/outbox.js';
import type { SqlDatabase } from '../store/sql-client.js';
import { isOutboxId, type OutboxMessage } from './outbox.js';
import { storeRows } from './store-rows.js';

/** A message the relay gave up on after its last attempt. It stays until an operator retries it. */
export interface DeadLetter extends OutboxMessage {
  readonly attempts: number;
  /** The last publish failure. */
  readonly lastError: string | null;
  readonly createdAt: Date;
  readonly parkedAt: Date;
}

interface DeadLetterRow {
  readonly id: string;
  readonly topic: string;
  readonly headers: Record<string, string>;
  readonly payload: unknown;
  readonly attempts: number;
  readonly last_error: string | null;
  readonly created_at: Date;
  readonly parked_at: Date;
}

/** Dead letters, most recently parked first. */
export async function deadLetters<Tx>(database: SqlDatabase<Tx>, options: { readonly limit?: number; readonly topic?: string } = {}): Promise<readonly DeadLetter[]> {
  const rows = await storeRows<DeadLetterRow>(database, DEAD_LETTERS, [options.limit ?? 100, options.topic ?? null]);
  return rows.map((row) => ({
    id: row.id,
    topic: row.topic,
    headers: row.headers,
    payload: row.payload,
    attempts: row.attempts,
    lastError: row.last_error,
    createdAt: row.created_at,
    parkedAt: row.parked_at,
  }));
}

/** Puts a dead letter back in line with a fresh count of attempts; false when `id` is not a dead letter. */
export async function retryDeadLetter<Tx>(database: SqlDatabase<Tx>, id: string): Promise<boolean> {
  if (!isOutboxId(id)) return false;
  return (await storeRows(database, RETRY_DEAD_LETTER, [id])).length > 0;
}
