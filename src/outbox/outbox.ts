import { randomUUID } from 'node:crypto';
import { RetrysafeError } from '../core/errors.js';
import { outboxStore, queryableOutbox } from '../postgres/postgres-outbox-store.js';
import type { OutboxMessage } from '../store/outbox-store.js';
import type { SqlDatabase } from '../store/sql-client.js';

export type { OutboxMessage } from '../store/outbox-store.js';

/** What a handler enqueues. Without an id, a new uuid is used. */
export interface NewOutboxMessage {
  /**
   * A uuid. Give one derived from the business change (a uuid v5, say) when
   * the same change could be enqueued twice: one id is one message.
   */
  readonly id?: string;
  readonly topic: string;
  readonly headers?: Readonly<Record<string, string>>;
  readonly payload: unknown;
}

/**
 * The one member `enqueue(tx, message)` needs from the handler's transaction:
 * node-postgres' client, PGlite's transaction and retrysafe's `SqlClient` all have it.
 */
export interface OutboxTransaction {
  query(text: string, values?: unknown[]): Promise<unknown>;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * Adds a message to the outbox inside the caller's transaction, typically an
 * atomic route handler's `tx`: it is published only if the transaction
 * commits, and then at least once. Returns the message id.
 */
export function enqueue(tx: OutboxTransaction, message: NewOutboxMessage): Promise<string>;
/**
 * The same in any data layer's own transaction (Kysely's `Transaction<DB>`,
 * Drizzle's `tx`, Prisma's transaction client, postgres.js' `sql.begin`
 * scope): `database` is the one that handed out `tx`.
 */
export function enqueue<Tx>(database: SqlDatabase<Tx>, tx: Tx, message: NewOutboxMessage): Promise<string>;
export async function enqueue<Tx>(
  ...args: [OutboxTransaction, NewOutboxMessage] | [SqlDatabase<Tx>, Tx, NewOutboxMessage]
): Promise<string> {
  const message = outboxMessage(args.length === 2 ? args[1] : args[2]);
  if (args.length === 2) await queryableOutbox.enqueue(args[0], message);
  else await outboxStore(args[0]).enqueue(args[1], message);
  return message.id;
}

/** Whether `id` has the form of an outbox message id: a uuid. */
export function isOutboxId(id: string): boolean {
  return UUID.test(id);
}

function outboxMessage(message: NewOutboxMessage): OutboxMessage {
  const id = message.id ?? randomUUID();
  if (!isOutboxId(id)) throw new RetrysafeError('misuse', `An outbox message id must be a uuid, got "${id}".`);
  if (message.topic === '' || Buffer.byteLength(message.topic) > 255) {
    throw new RetrysafeError('misuse', 'An outbox topic must be 1 to 255 bytes long.');
  }
  checkJson(message.payload);
  return { id, topic: message.topic, headers: message.headers ?? {}, payload: message.payload };
}

function checkJson(payload: unknown): void {
  let text: string | undefined;
  try {
    text = JSON.stringify(payload);
  } catch (cause) {
    throw new RetrysafeError('misuse', 'An outbox payload must be representable as JSON.', { cause });
  }
  if (text === undefined) throw new RetrysafeError('misuse', 'An outbox payload must be representable as JSON.');
}
