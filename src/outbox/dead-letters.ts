import { outboxStore } from '../postgres/postgres-outbox-store.js';
import type { DeadLetter } from '../store/outbox-store.js';
import type { SqlDatabase } from '../store/sql-client.js';
import { isOutboxId } from './outbox.js';

export type { DeadLetter } from '../store/outbox-store.js';

/** Dead letters, most recently parked first. */
export function deadLetters<Tx>(
  database: SqlDatabase<Tx>,
  options: { readonly limit?: number; readonly topic?: string } = {},
): Promise<readonly DeadLetter[]> {
  return outboxStore(database).deadLetters(options.limit ?? 100, options.topic ?? null);
}

/** Puts a dead letter back in line with a fresh count of attempts; false when `id` is not a dead letter. */
export async function retryDeadLetter<Tx>(database: SqlDatabase<Tx>, id: string): Promise<boolean> {
  if (!isOutboxId(id)) return false;
  return outboxStore(database).retryDeadLetter(id);
}
