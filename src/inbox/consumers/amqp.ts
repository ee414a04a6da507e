import { setTimeout as sleep } from 'node:timers/promises';
import { announce, type DeliveryOutcome, type InboxConsumerOptions, processDelivery } from '../delivery.js';
import type { InboxSubscription } from '../subscription.js';
import { consumeRules } from '../inbox.js';
import { checkOptions, milliseconds, type OptionRules } from '../../core/option-rules.js';

/** The parts of an amqplib message the consumer reads. */
export interface AmqpDeliveryLike {
  readonly content: Uint8Array;
  readonly fields: { readonly routingKey: string; readonly redelivered: boolean };
  readonly properties: {
    readonly messageId?: unknown;
    readonly headers?: Readonly<Record<string, unknown>> | undefined;
  };
}

/** The members of an amqplib `Channel` the consumer calls. */
export interface AmqpConsumeChannelLike<Message extends AmqpDeliveryLike> {
  consume(
    queue: string,
    onMessage: (message: Message | null) => void,
    options: { noAck: boolean },
  ): Promise<{ consumerTag: string }>;
  cancel(consumerTag: string): Promise<unknown>;
  ack(message: Message): void;
  nack(message: Message, allUpTo: boolean, requeue: boolean): void;
}

export interface AmqpConsumerOptions<Tx> extends InboxConsumerOptions<Tx> {
  readonly queue: string;
  /** How long a failed message is held before it goes back to the queue, so a failing handler does not spin. Default 1000 ms. */
  readonly requeueDelayMs?: number;
}

export const amqpConsumerRules = {
  requeueDelayMs: milliseconds(0),
  ...consumeRules,
} as const satisfies OptionRules<AmqpConsumerOptions<unknown>>;

/**
 * Consumes a RabbitMQ queue through the inbox, with manual acks: a message is
 * acked only after its inbox record and the handler's writes committed, handed
 * back (nack, requeue) when either failed, and rejected without requeue (to
 * the queue's dead-letter exchange, if any) when it has no `messageId` or its
 * body is not JSON. Limit messages in hand with `channel.prefetch(n)`.
 */
export async function consumeAmqp<Tx, Message extends AmqpDeliveryLike>(
  channel: AmqpConsumeChannelLike<Message>,
  options: AmqpConsumerOptions<Tx>,
): Promise<InboxSubscription> {
  checkOptions(amqpConsumerRules, options);
  const inHand = new Set<Promise<void>>();
  const handle = async (message: Message): Promise<void> => {
    const outcome = await processDelivery(options, {
      id: message.properties.messageId,
      topic: message.fields.routingKey,
      headers: stringHeaders(message.properties.headers),
      content: message.content,
      redelivered: message.fields.redelivered,
    });
    if (outcome.kind === 'failed') await sleep(options.requeueDelayMs ?? 1000);
    settle(channel, message, outcome);
    announce(options, outcome);
  };
  const { consumerTag } = await channel.consume(
    options.queue,
    (message) => {
      // null: the broker cancelled the consumer (the queue was deleted).
      if (message === null) return;
      const task = handle(message).finally(() => inHand.delete(task));
      inHand.add(task);
    },
    { noAck: false },
  );
  return {
    async close() {
      await channel.cancel(consumerTag);
      await Promise.all(inHand);
    },
  };
}

function settle<Message extends AmqpDeliveryLike>(
  channel: AmqpConsumeChannelLike<Message>,
  message: Message,
  outcome: DeliveryOutcome,
): void {
  try {
    if (outcome.kind === 'processed' || outcome.kind === 'duplicate') channel.ack(message);
    else channel.nack(message, false, outcome.kind === 'failed');
  } catch {
    // The channel closed meanwhile: the broker redelivers the message, and the inbox recognises it.
  }
}

function stringHeaders(headers: Readonly<Record<string, unknown>> | undefined): Record<string, string> {
  const strings: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers ?? {})) if (typeof value === 'string') strings[name] = value;
  return strings;
}
