import { consume, type InboxResult } from 'retrysafe/inbox';
import type { OutboxMessage } from 'retrysafe/outbox';
import type { SqlClient, SqlDatabase } from 'retrysafe/postgres';
import { readOrderCreated } from './order-created.js';
import { INSERT_ORDER_CONFIRMATION } from '../data/queries.js';

/**
 * The consumer's name in the inbox. The service (no broker) and `consumer.ts`
 * (with one) use the same name, so each recognises what the other applied.
 */
export const CONFIRMATION_CONSUMER = 'order-confirmations';

/** Sends the confirmation of a new order: a row in `emails`, written through the consumer's transaction. */
export async function sendOrderConfirmation(payload: unknown, tx: SqlClient): Promise<void> {
  const order = readOrderCreated(payload);
  await tx.query(INSERT_ORDER_CONFIRMATION, [order.tenant, order.order_id]);
}

/** The consumer for the in-process transport: each message through the inbox, so a second delivery is a `duplicate`. */
export function confirmOrders(
  database: SqlDatabase<SqlClient>,
): (message: OutboxMessage) => Promise<InboxResult<void>> {
  return (message) =>
    consume(database, CONFIRMATION_CONSUMER, message.id, (tx) => sendOrderConfirmation(message.payload, tx));
}
