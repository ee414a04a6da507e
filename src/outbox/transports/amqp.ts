import type { OutboxMessage } from '../outbox.js';
import type { PublishResult, Transport } from '../transport.js';

/** What amqplib passes for a returned (unroutable) message; only its id is read. */
interface ReturnedMessage {
  readonly properties: { readonly messageId?: unknown };
}

/** The publish options the transport sets. */
export interface AmqpPublishOptions {
  readonly messageId: string;
  readonly persistent: boolean;
  readonly mandatory: boolean;
  readonly contentType: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly timestamp: number;
}

/** The members of an amqplib `ConfirmChannel` (`connection.createConfirmChannel()`) that the transport calls. */
export interface AmqpConfirmChannelLike {
  publish(
    exchange: string,
    routingKey: string,
    content: Buffer,
    options: AmqpPublishOptions,
    callback: (error: unknown) => void,
  ): boolean;
  on(event: 'return', listener: (message: ReturnedMessage) => void): unknown;
}

export interface AmqpTransportOptions {
  /** The exchange to publish to; the message topic is the routing key. Declare it and its bindings beforehand. */
  readonly exchange: string;
  /**
   * Whether a message that no queue is bound to receive counts as a failed
   * publish (retried, then parked) rather than as delivered and dropped by the
   * broker. Default true.
   */
  readonly mandatory?: boolean;
}

/**
 * Publishes to RabbitMQ through a confirm channel: a publish counts only once
 * the broker confirms it, persistent, with the outbox id as `messageId` so
 * that consumers can deduplicate a message published twice.
 */
export function amqpTransport(channel: AmqpConfirmChannelLike, options: AmqpTransportOptions): Transport {
  const mandatory = options.mandatory ?? true;
  const returned = returnedOn(channel);
  return {
    publish(message: OutboxMessage) {
      const content = Buffer.from(JSON.stringify(message.payload), 'utf8');
      const publishOptions: AmqpPublishOptions = {
        messageId: message.id,
        persistent: true,
        mandatory,
        contentType: 'application/json',
        headers: message.headers,
        timestamp: Math.floor(Date.now() / 1000),
      };
      return new Promise<PublishResult>((resolve, reject) => {
        channel.publish(options.exchange, message.topic, content, publishOptions, (error) => {
          if (error !== null && error !== undefined)
            return reject(error instanceof Error ? error : new Error(`The broker refused message ${message.id}.`));
          if (returned.delete(message.id))
            return reject(
              new Error(`No queue is bound to routing key "${message.topic}" on exchange "${options.exchange}".`),
            );
          resolve('stored');
        });
      });
    },
  };
}

/**
 * RabbitMQ returns an unroutable mandatory message before it confirms it, on the same channel. One listener
 * per channel, whichever transport saw it first, collects the returned ids for all of them (an outbox id is
 * one message): a listener per transport would pile up on a channel shared by many.
 */
const returnedIds = new WeakMap<AmqpConfirmChannelLike, Set<string>>();

function returnedOn(channel: AmqpConfirmChannelLike): Set<string> {
  const known = returnedIds.get(channel);
  if (known !== undefined) return known;
  const returned = new Set<string>();
  returnedIds.set(channel, returned);
  channel.on('return', (message) => {
    if (typeof message.properties.messageId === 'string') returned.add(message.properties.messageId);
  });
  return returned;
}
