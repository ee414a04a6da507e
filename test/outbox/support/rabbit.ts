import { randomBytes } from 'node:crypto';
import amqp, { type Channel, type ChannelModel, type ConfirmChannel } from 'amqplib';

/** An exchange and a queue bound to it, named for this test run alone. */
export interface RabbitRoute {
  readonly connection: ChannelModel;
  /** For publishing through the outbox transport. */
  readonly confirmChannel: ConfirmChannel;
  /** For declaring, inspecting and consuming. */
  readonly channel: Channel;
  readonly exchange: string;
  readonly queue: string;
  /** A dead-letter queue: where the queue's rejected messages go. */
  readonly deadLetterQueue: string;
  /** Messages waiting in `queue` (not counting those in a consumer's hands). */
  waiting(name?: string): Promise<number>;
  /** Empties the queue and its dead-letter queue, between tests. */
  reset(): Promise<void>;
  /** Deletes everything it declared and disconnects. */
  close(): Promise<void>;
}

/** Declares a topic exchange whose `orders.#`, `emails.#` and `payments.#` keys go to a fresh queue. */
export async function rabbitRoute(url: string): Promise<RabbitRoute> {
  const suffix = randomBytes(6).toString('hex');
  const exchange = `retrysafe-test-${suffix}`;
  const queue = `retrysafe-test-${suffix}`;
  const deadLetterExchange = `retrysafe-test-dlx-${suffix}`;
  const deadLetterQueue = `retrysafe-test-dlq-${suffix}`;
  const connection = await amqp.connect(url);
  const channel = await connection.createChannel();
  const confirmChannel = await connection.createConfirmChannel();
  await channel.assertExchange(exchange, 'topic', { durable: false });
  await channel.assertExchange(deadLetterExchange, 'fanout', { durable: false });
  await channel.assertQueue(deadLetterQueue, { durable: false });
  await channel.bindQueue(deadLetterQueue, deadLetterExchange, '');
  await channel.assertQueue(queue, { durable: false, deadLetterExchange });
  for (const pattern of ['orders.#', 'emails.#', 'payments.#']) await channel.bindQueue(queue, exchange, pattern);
  return {
    connection,
    confirmChannel,
    channel,
    exchange,
    queue,
    deadLetterQueue,
    waiting: async (name = queue) => (await channel.checkQueue(name)).messageCount,
    async reset() {
      await channel.purgeQueue(queue);
      await channel.purgeQueue(deadLetterQueue);
    },
    async close() {
      await channel.deleteQueue(queue);
      await channel.deleteQueue(deadLetterQueue);
      await channel.deleteExchange(exchange);
      await channel.deleteExchange(deadLetterExchange);
      await connection.close();
    },
  };
}
