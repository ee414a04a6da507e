import { type Clock, systemClock } from '../core/clock.js';
import { checkOptions, count, milliseconds, type OptionRules } from '../core/option-rules.js';
import { pruneInBatches, type PruneOptions } from '../background/prune-in-batches.js';
import { RetrysafeError } from '../core/errors.js';
import { inboxStore } from '../postgres/postgres-inbox-store.js';
import { budgeted, budgetedTransaction } from '../store/budgeted-store.js';
import type { InboxKey, InboxStore } from '../store/inbox-store.js';
import type { SqlDatabase } from '../store/sql-client.js';
import { defaultStoreTimeoutMs } from '../store/store-clock.js';

/**
 * Who processes a message: a name, or a name with a generation. A consumer
 * that rebuilds its projection on purpose moves to a new generation, whose
 * inbox starts empty. A bare name is generation 1.
 */
export type InboxConsumer = string | { readonly name: string; readonly generation: number };

/** What `consume` did: ran the handler and committed, or found the message already processed. */
export type InboxResult<T> = { readonly kind: 'processed'; readonly value: T } | { readonly kind: 'duplicate' };

/** How long `consume` waits on the database. */
export interface ConsumeOptions {
  /**
   * The budget of each of the inbox's own statements (BEGIN, the record,
   * COMMIT or ROLLBACK), 5000 ms by default: past it `consume` rejects with
   * `store-unavailable` and the handler, if it has not started, never runs.
   * The handler's own work is not bounded.
   */
  readonly storeTimeoutMs?: number;
}

export const consumeRules = { storeTimeoutMs: milliseconds(1) } as const satisfies OptionRules<ConsumeOptions>;

/**
 * Processes a message at most once per consumer: records `(consumer,
 * messageId)` and runs `handler` in ONE transaction, so a redelivered message
 * finds the record and the handler does not run. Acknowledge the message to
 * the broker only after this resolves. If the handler throws, nothing is
 * recorded and the error is rethrown; store failures throw
 * `RetrysafeError('store-unavailable')`, a stalled database too, within
 * `storeTimeoutMs`. The handler gets the data layer's own transaction (`Tx`),
 * like an atomic route's.
 */
export async function consume<Tx, T>(
  database: SqlDatabase<Tx>,
  consumer: InboxConsumer,
  messageId: string,
  handler: (tx: Tx) => Promise<T>,
  options: ConsumeOptions = {},
): Promise<InboxResult<T>> {
  checkOptions(consumeRules, options);
  const key = inboxKey(consumer, messageId);
  const store = budgetedInbox(inboxStore(database), options.storeTimeoutMs ?? defaultStoreTimeoutMs);
  return store.transaction((tx) => consumeIn(store, tx, key, handler));
}

/** An inbox store whose every statement has the store budget; the work inside its transaction has none. */
export function budgetedInbox<Tx>(inbox: InboxStore<Tx>, budgetMs: number, clock: Clock = systemClock): InboxStore<Tx> {
  return budgeted(
    inbox,
    budgetMs,
    { transaction: (work) => budgetedTransaction(budgetMs, (inner) => inbox.transaction(inner), work, clock) },
    clock,
  );
}

/**
 * `consume`'s work inside a transaction the inbox store opened: records the
 * message in `tx`, then runs the handler there unless it was recorded before.
 * The webhook worker writes more in the same transaction.
 */
export async function consumeIn<Tx, T>(
  store: InboxStore<Tx>,
  tx: Tx,
  key: InboxKey,
  handler: (tx: Tx) => Promise<T>,
): Promise<InboxResult<T>> {
  if (!(await store.record(tx, key))) return { kind: 'duplicate' };
  return { kind: 'processed', value: await handler(tx) };
}

/** Deletes inbox records older than the retention, in small batches. Keep them longer than any redelivery can come late. */
export function pruneInbox<Tx>(database: SqlDatabase<Tx>, options: PruneOptions): Promise<number> {
  return pruneInBatches(inboxStore(database).pruneBatch, options);
}

/** The generation column is an integer. */
const generationRule = { generation: count(1, 2 ** 31 - 1) } as const;

/** The inbox key of a consumer and a message id, checked. */
export function inboxKey(consumer: InboxConsumer, messageId: string): InboxKey {
  const { name, generation } = typeof consumer === 'string' ? { name: consumer, generation: 1 } : consumer;
  if (name === '' || Buffer.byteLength(name) > 255)
    throw new RetrysafeError('misuse', 'A consumer name must be 1 to 255 bytes long.');
  checkOptions(generationRule, { generation }, 'consumer.');
  if (messageId === '' || Buffer.byteLength(messageId) > 255)
    throw new RetrysafeError('misuse', 'A message id must be 1 to 255 bytes long.');
  return { consumer: name, generation, messageId };
}
