import { createHash } from 'node:crypto';
import type { NewOutboxMessage } from 'retrysafe/outbox';

/** The topic (AMQP routing key, NATS subject) of the message every new order sends. */
export const ORDER_CREATED = 'order.created';

/** What an `order.created` message carries. */
export interface OrderCreated {
  readonly order_id: string;
  readonly tenant: string;
  readonly total_cents: number;
}

/**
 * The outbox message for a new order. Its id is derived from the order (a
 * name-based uuid), so one order is one message however often it is built,
 * and every copy a broker delivers carries the same id for the inbox.
 */
export function orderCreatedMessage(order: OrderCreated): NewOutboxMessage {
  return {
    id: nameBasedUuid(`${ORDER_CREATED}\n${order.tenant}\n${order.order_id}`),
    topic: ORDER_CREATED,
    payload: order,
  };
}

/** Reads an `order.created` payload. Only this service writes them, so one that does not fit is a bug, and throws. */
export function readOrderCreated(payload: unknown): OrderCreated {
  if (typeof payload === 'object' && payload !== null) {
    const { order_id: orderId, tenant, total_cents: total } = payload as Record<string, unknown>;
    if (typeof orderId === 'string' && typeof tenant === 'string' && Number.isInteger(total)) {
      return { order_id: orderId, tenant, total_cents: total as number };
    }
  }
  throw new Error('An order.created payload needs order_id, tenant and total_cents.');
}

/** Any fixed uuid works; it keeps these ids apart from other name-based uuids. */
const NAMESPACE = Buffer.from('5b0d7c1e9f2a4e6b8c3d1a2b3c4d5e6f', 'hex');

/** RFC 9562 version 5: the SHA-1 of namespace and name, with the version and variant bits set. */
function nameBasedUuid(name: string): string {
  const bytes = createHash('sha1').update(NAMESPACE).update(name, 'utf8').digest().subarray(0, 16);
  bytes.writeUInt8((bytes.readUInt8(6) & 0x0f) | 0x50, 6);
  bytes.writeUInt8((bytes.readUInt8(8) & 0x3f) | 0x80, 8);
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
