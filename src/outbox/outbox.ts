import { randomUUID } from 'node:crypto';
import { RetrysafeError } from '../core/errors.js';
import { ENQUEUE } from '../postgres/sql/outbox.js';

/** A message as the relay hands it to a transport. */
export interface OutboxMessage {
  /** A uuid, the same on every publish of this message: consumers deduplicate by it. */
  readonly id: string;
  /** Routing key, subject or webhook event name, as the transport reads it. */
  readonly topic: string;
  readonly headers: Readonly<Record<string, string>>;
  /** Any JSON value. */
  readonly payload: unknown;
}

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
 * The one member `enqueue` needs from the handler's transaction: node-postgres'
 * client, PGlite's transaction and retrysafe's `SqlClient` all have it.
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
export async function enqueue(tx: OutboxTransaction, message: NewOutboxMessage): Promise<string> {
  const id = message.id ?? randomUUID();
  if (!isOutboxId(id)) throw new RetrysafeError('misuse', `An outbox message id must be a uuid, got "${id}".`);
  if (message.topic === '' || Buffer.byteLength(message.topic) > 255) {
    throw new RetrysafeError('misuse', 'An outbox topic must be 1 to 255 bytes long.');
  }
  await tx.query(ENQUEUE, [id, message.topic, JSON.stringify(message.headers ?? {}), jsonText(message.payload)]);
  return id;
}

/** Whether `id` has the form of an outbox message id: a uuid. */
export function isOutboxId(id: string): boolean {
  return UUID.test(id);
}

function jsonText(payload: unknown): string {
  let text: string | undefined;
  try {
    text = JSON.stringify(payload);
  } catch (cause) {
    throw new RetrysafeError('misuse', 'An outbox payload must be representable as JSON.', { cause });
  }
  if (text === undefined) throw new RetrysafeError('misuse', 'An outbox payload must be representable as JSON.');
  return text;
}
