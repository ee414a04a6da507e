import { BACKLOG } from '../postgres/sql/outbox.js';
import type { SqlDatabase } from '../store/sql-client.js';
import { storeRows } from './store-rows.js';

/** The outbox's backlog, for monitoring. */
export interface OutboxBacklog {
  /** Messages waiting to be published. */
  readonly pending: number;
  /** Dead letters waiting for an operator. */
  readonly dead: number;
  /** Age of the oldest pending message, 0 when none waits. */
  readonly oldestPendingSeconds: number;
}

export async function outboxBacklog<Tx>(database: SqlDatabase<Tx>): Promise<OutboxBacklog> {
  const [row] = await storeRows<{ pending: number; dead: number; oldest_pending_seconds: number }>(database, BACKLOG, []);
  return { pending: row?.pending ?? 0, dead: row?.dead ?? 0, oldestPendingSeconds: row?.oldest_pending_seconds ?? 0 };
}
