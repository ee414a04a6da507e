import type { JetStreamManager } from '@nats-io/jetstream';
import type { Channel } from 'amqplib';
import type { BrokerConfig } from '../infrastructure/config.js';
import { ORDER_CREATED } from './order-created.js';

export type AmqpBroker = Extract<BrokerConfig, { readonly kind: 'amqp' }>;
export type NatsBroker = Extract<BrokerConfig, { readonly kind: 'nats' }>;

/**
 * The exchange, the queue and the binding that carry `order.created`. Both
 * the service and the consumer declare them, so either may start first;
 * declaring is idempotent. Durable, so that persistent messages outlive a
 * broker restart.
 */
export async function declareAmqpRoute(
  channel: Pick<Channel, 'assertExchange' | 'assertQueue' | 'bindQueue'>,
  broker: AmqpBroker,
): Promise<void> {
  await channel.assertExchange(broker.exchange, 'topic', { durable: true });
  await channel.assertQueue(broker.queue, { durable: true });
  await channel.bindQueue(broker.queue, broker.exchange, ORDER_CREATED);
}

/** The subject `order.created` is published on: under the stream's name, so that streams of other deployments never overlap. */
export function natsSubject(broker: NatsBroker): string {
  return `${broker.stream}.${ORDER_CREATED}`;
}

/**
 * The stream that keeps `order.created`; adding it again with the same
 * settings changes nothing. Its duplicate window (two minutes by default)
 * drops a copy the relay publishes again after a crash.
 */
export async function declareStream(jsm: JetStreamManager, broker: NatsBroker): Promise<void> {
  await jsm.streams.add({ name: broker.stream, subjects: [natsSubject(broker)] });
}

/** The durable consumer that confirms orders, with explicit acks: a message left unacked comes back after `ack_wait` (30 s). */
export async function declareDurable(jsm: JetStreamManager, broker: NatsBroker): Promise<void> {
  await jsm.consumers.add(broker.stream, {
    durable_name: broker.durable,
    ack_policy: 'explicit',
    filter_subject: natsSubject(broker),
  });
}
