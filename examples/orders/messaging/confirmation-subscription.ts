import {
  consumeAmqp,
  consumeJetStream,
  type DeliveryOutcome,
  type InboxMessage,
  type InboxSubscription,
} from 'retrysafe/inbox';
import type { SqlClient, SqlDatabase } from 'retrysafe/postgres';
import {
  type AmqpBroker,
  declareAmqpRoute,
  declareDurable,
  declareStream,
  type NatsBroker,
} from './broker-topology.js';
import { CONFIRMATION_CONSUMER, sendOrderConfirmation } from './order-confirmation.js';

export interface ConfirmationSubscriptionOptions {
  readonly database: SqlDatabase<SqlClient>;
  /** Told about every delivery once it is settled with the broker. */
  readonly onSettled: (outcome: DeliveryOutcome) => void;
  /** Told when the broker connection is lost for good; the process should stop and be restarted. */
  readonly onLost: (error: unknown) => void;
}

/** A running consumer and the way to stop it: the deliveries in hand are settled, then the connection closes. */
export interface ConfirmationSubscription {
  close(): Promise<void>;
}

/**
 * Reads `order.created` from the broker and sends each confirmation through
 * the inbox, acknowledging a message only after its commit: a copy delivered
 * again (a crash before the ack, a republish by the relay) is a `duplicate`.
 */
export function subscribeConfirmations(
  broker: AmqpBroker | NatsBroker,
  options: ConfirmationSubscriptionOptions,
): Promise<ConfirmationSubscription> {
  return broker.kind === 'amqp' ? subscribeAmqp(broker, options) : subscribeJetStream(broker, options);
}

const handler = (message: InboxMessage, tx: SqlClient): Promise<void> => sendOrderConfirmation(message.payload, tx);

async function subscribeAmqp(
  broker: AmqpBroker,
  { database, onSettled, onLost }: ConfirmationSubscriptionOptions,
): Promise<ConfirmationSubscription> {
  const { default: amqp } = await import('amqplib');
  const connection = await amqp.connect(broker.url);
  let closing = false;
  // Unacked messages go back to the queue when the connection drops; a restarted consumer takes them again.
  connection.on('error', (error: unknown) => onLost(error));
  connection.on('close', () => closing || onLost(new Error('The RabbitMQ connection closed.')));
  const channel = await connection.createChannel();
  await channel.prefetch(10);
  await declareAmqpRoute(channel, broker);
  const subscription = await consumeAmqp(channel, {
    database,
    consumer: CONFIRMATION_CONSUMER,
    queue: broker.queue,
    handler,
    onSettled,
  });
  return {
    async close() {
      closing = true;
      await subscription.close();
      await connection.close();
    },
  };
}

async function subscribeJetStream(
  broker: NatsBroker,
  { database, onSettled, onLost }: ConfirmationSubscriptionOptions,
): Promise<ConfirmationSubscription> {
  const [{ connect }, { jetstream, jetstreamManager }] = await Promise.all([
    import('@nats-io/transport-node'),
    import('@nats-io/jetstream'),
  ]);
  const connection = await connect({ servers: broker.url });
  let closing = false;
  // The client reconnects by itself; `closed` resolves only when it gave up.
  void connection.closed().then((error) => closing || onLost(error ?? new Error('The NATS connection closed.')));
  const jsm = await jetstreamManager(connection);
  await declareStream(jsm, broker);
  await declareDurable(jsm, broker);
  const consumer = await jetstream(connection).consumers.get(broker.stream, broker.durable);
  const subscription: InboxSubscription = await consumeJetStream(consumer, {
    database,
    consumer: CONFIRMATION_CONSUMER,
    handler,
    onSettled,
  });
  return {
    async close() {
      closing = true;
      await subscription.close();
      await connection.close();
    },
  };
}
