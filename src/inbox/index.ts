export { consume, pruneInbox, type ConsumeOptions, type InboxConsumer, type InboxResult } from './inbox.js';
export type { DeliveryOutcome, InboxConsumerOptions, InboxMessage } from './delivery.js';
export type { InboxSubscription } from './subscription.js';
export {
  consumeAmqp,
  type AmqpConsumeChannelLike,
  type AmqpConsumerOptions,
  type AmqpDeliveryLike,
} from './consumers/amqp.js';
export {
  consumeJetStream,
  type JetStreamConsumerLike,
  type JetStreamConsumerOptions,
  type JetStreamMessageLike,
  type NatsHeadersReadLike,
} from './consumers/jetstream.js';
