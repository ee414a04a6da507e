import { outboxStore } from '../postgres/postgres-outbox-store.js';
import type { OutboxBacklog } from '../store/outbox-store.js';
import type { SqlDatabase } from '../store/sql-client.js';

export type { OutboxBacklog } from '../store/outbox-store.js';

/** The outbox's backlog, for monitoring. */
export function outboxBacklog<Tx>(database: SqlDatabase<Tx>): Promise<OutboxBacklog> {
  return outboxStore(database).backlog();
}
