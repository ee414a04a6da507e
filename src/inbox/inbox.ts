import { RetrysafeError } from '../core/errors.js';
import { PRUNE_INBOX, RECORD_MESSAGE } from '../postgres/sql/inbox.js';
import { handlerPart, inTransaction, storePart } from '../postgres/transaction.js';
import { type PruneOptions, checkPrune } from '../outbox/prune.js';
import { pruneInBatches } from '../outbox/store-rows.js';
import type { SqlClient, SqlDatabase } from '../store/sql-client.js';

/**
 * Who processes a message: a name, or a name with a generation. A consumer
 * that rebuilds its projection on purpose moves to a new generation, whose
 * inbox starts empty. A bare name is generation 1.
 */
export type InboxConsumer = string | { readonly name: string; readonly generation: number };

/** What `consume` did: ran the handler and committed, or found the message already processed. */
export type InboxResult<T> = { readonly kind: 'processed'; readonly value: T } | { readonly kind: 'duplicate' };

/**
 * Processes a message at most once per consumer: records `(consumer,
 * messageId)` and runs `handler` in ONE transaction, so a redelivered message
 * finds the record and the handler does not run. Acknowledge the message to
 * the broker only after this resolves. If the handler throws, nothing is
 * recorded and the error is rethrown; store failures throw
 * `RetrysafeError('store-unavailable')`.
 */
export async function consume<Tx, T>(database: SqlDatabase<Tx>, consumer: InboxConsumer, messageId: string, handler: (tx: Tx) => Promise<T>): Promise<InboxResult<T>> {
  const key = inboxKey(consumer, messageId);
  return inTransaction(database, async (sql, tx) => ({ commit: true, value: await consumeRecorded(sql, tx, key, handler) }));
}

/** `consume`'s work inside a transaction already opened with `inTransaction`, for the webhook worker, which writes more in it. */
export async function consumeInTransaction<Tx, T>(
  sql: SqlClient,
  tx: Tx,
  consumer: InboxConsumer,
  messageId: string,
  handler: (tx: Tx) => Promise<T>,
): Promise<InboxResult<T>> {
  return consumeRecorded(sql, tx, inboxKey(consumer, messageId), handler);
}

/** Deletes inbox records older than the retention, in small batches. Keep them longer than any redelivery can come late. */
export function pruneInbox<Tx>(database: SqlDatabase<Tx>, options: PruneOptions): Promise<number> {
  return pruneInBatches(database, PRUNE_INBOX, checkPrune(options));
}

type InboxKey = readonly [name: string, generation: number, messageId: string];

async function consumeRecorded<Tx, T>(sql: SqlClient, tx: Tx, key: InboxKey, handler: (tx: Tx) => Promise<T>): Promise<InboxResult<T>> {
  const { rows } = await storePart(() => sql.query(RECORD_MESSAGE, key));
  if (rows.length === 0) return { kind: 'duplicate' };
  return { kind: 'processed', value: await handlerPart(() => handler(tx)) };
}

function inboxKey(consumer: InboxConsumer, messageId: string): InboxKey {
  const { name, generation } = typeof consumer === 'string' ? { name: consumer, generation: 1 } : consumer;
  if (name === '' || Buffer.byteLength(name) > 255) throw new RetrysafeError('misuse', 'A consumer name must be 1 to 255 bytes long.');
  if (!Number.isInteger(generation) || generation < 1) throw new RetrysafeError('misuse', `A consumer generation must be a positive integer, got ${generation}.`);
  if (messageId === '' || Buffer.byteLength(messageId) > 255) throw new RetrysafeError('misuse', 'A message id must be 1 to 255 bytes long.');
  return [name, generation, messageId];
}
