import type { ChannelModel } from 'amqplib';
import { amqpTransport, jetStreamTransport, type Transport } from 'retrysafe/outbox';
import type { SqlClient, SqlDatabase } from 'retrysafe/postgres';
import { type AmqpBroker, declareAmqpRoute, declareStream, natsSubject } from './broker-topology.js';
import type { BrokerConfig } from '../infrastructure/config.js';
import { localTransport } from './local-transport.js';
import { confirmOrders } from './order-confirmation.js';

/** Where the relay publishes `order.created`, and how to let go of it. */
export interface OpenTransport {
  readonly transport: Transport;
  /** For the start-up banner, without credentials. */
  readonly description: string;
  close(): Promise<void>;
}

/**
 * Without a broker, messages go straight to the confirmation consumer in this
 * process; with one, to RabbitMQ or JetStream, where `consumer.ts` reads them.
 * Broker clients are loaded only when chosen.
 */
export async function openTransport(
  broker: BrokerConfig,
  database: SqlDatabase<SqlClient>,
  onError: (error: unknown) => void,
): Promise<OpenTransport> {
  switch (broker.kind) {
    case 'local':
      return {
        transport: localTransport(confirmOrders(database)),
        description: 'sent by this process, no broker',
        close: async () => {},
      };
    case 'amqp':
      return openAmqp(broker, onError);
    case 'nats': {
      const [{ connect, headers }, { jetstream, jetstreamManager }] = await Promise.all([
        import('@nats-io/transport-node'),
        import('@nats-io/jetstream'),
      ]);
      // The NATS client reconnects by itself; publishes meanwhile fail, and the relay retries them.
      const connection = await connect({ servers: broker.url });
      await declareStream(await jetstreamManager(connection), broker);
      return {
        transport: jetStreamTransport(jetstream(connection), { headers, subject: () => natsSubject(broker) }),
        description: `published to JetStream stream ${broker.stream} at ${new URL(broker.url).host}; run consumer.ts`,
        close: () => connection.close(),
      };
    }
  }
}

/**
 * RabbitMQ through a connection that reconnects by itself, publishing on a
 * confirm channel opened on first use and again after it closed. While the
 * broker is unreachable, publishes fail at once and the relay retries them
 * with backoff; the messages wait in the outbox.
 */
async function openAmqp(broker: AmqpBroker, onError: (error: unknown) => void): Promise<OpenTransport> {
  const { default: amqp } = await import('amqplib');
  let live: ChannelModel | undefined;
  let channel: Promise<Transport> | undefined;
  const openChannel = async (model: ChannelModel): Promise<Transport> => {
    const confirmChannel = await model.createConfirmChannel();
    confirmChannel.on('error', onError);
    confirmChannel.on('close', () => (channel = undefined));
    await declareAmqpRoute(confirmChannel, broker);
    return amqpTransport(confirmChannel, { exchange: broker.exchange });
  };
  const connection = await amqp.connect(broker.url, {
    recovery: {
      // A wrong URL fails the start; a broker lost later is retried for ever.
      initialMaxRetries: 2,
      setup(model: ChannelModel) {
        live = model;
        return Promise.resolve();
      },
    },
  });
  connection.on('error', onError);
  connection.on('disconnect', () => {
    live = undefined;
    channel = undefined;
  });
  return {
    transport: {
      async publish(message) {
        if (live === undefined) throw new Error('Not connected to RabbitMQ; the relay tries again later.');
        channel ??= openChannel(live).catch((error: unknown) => {
          // A channel that failed to open is opened afresh by the next publish.
          channel = undefined;
          throw error;
        });
        return (await channel).publish(message);
      },
    },
    description: `published to RabbitMQ exchange ${broker.exchange} at ${new URL(broker.url).host}; run consumer.ts`,
    close: () => connection.close(),
  };
}
