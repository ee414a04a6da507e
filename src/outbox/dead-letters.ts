import { outboxStore } from '../postgres/postgres-outbox-store.js';
import type { DeadLetter } from '../store/outbox-store.js';
import { operationQueryRules } from '../store/operator-rules.js';
import { checkOptions, type OptionRules } from '../core/option-rules.js';
import type { SqlDatabase } from '../store/sql-client.js';
import { isOutboxId } from './outbox.js';

export type { DeadLetter } from '../store/outbox-store.js';

/** Which dead letters `deadLetters` lists. */
export interface DeadLettersOptions {
  /** Most listed. Default 100. */
  readonly limit?: number;
  /** Only this topic's. Default: every topic. */
  readonly topic?: string;
}

export const deadLettersRules = {
  limit: operationQueryRules.limit,
} as const satisfies OptionRules<DeadLettersOptions>;

/** Dead letters, most recently parked first. */
export function deadLetters<Tx>(
  database: SqlDatabase<Tx>,
  options: DeadLettersOptions = {},
): Promise<readonly DeadLetter[]> {
  checkOptions(deadLettersRules, options);
  return outboxStore(database).deadLetters(options.limit ?? 100, options.topic ?? null);
}

/** Puts a dead letter back in line with a fresh count of attempts; false when `id` is not a dead letter. */
export async function retryDeadLetter<Tx>(database: SqlDatabase<Tx>, id: string): Promise<boolean> {
  if (!isOutboxId(id)) return false;
  return outboxStore(database).retryDeadLetter(id);
}
