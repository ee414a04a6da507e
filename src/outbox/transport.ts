import type { OutboxMessage } from './outbox.js';

/**
 * How a transport saw a publish: `stored` when the broker or receiver took the
 * message, `duplicate` when it recognised the id from an earlier publish and
 * dropped this copy (JetStream's duplicate window).
 */
export type PublishResult = 'stored' | 'duplicate';

/**
 * Where the relay publishes. `publish` resolves only once the other side has
 * the message (a publisher confirm, a JetStream ack, a 2xx) and rejects when it
 * may not have it; the relay then tries again later under the same id.
 */
export interface Transport {
  publish(message: OutboxMessage): Promise<PublishResult>;
}
