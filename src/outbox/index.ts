export { enqueue, type NewOutboxMessage, type OutboxMessage, type OutboxTransaction } from './outbox.js';
export { Relay, type RelayOptions, type RelayReport } from './relay.js';
export type { PublishResult, Transport } from './transport.js';
export { defaultRetryPolicy, type RetryPolicy } from '../background/worker-retry.js';
export {
  pgListener,
  pgliteListener,
  type PGliteListenLike,
  type PgListenClientLike,
} from '../postgres/outbox-listeners.js';
export type { Listener } from '../background/poll-loop.js';
export { deadLetters, retryDeadLetter, type DeadLetter, type DeadLettersOptions } from './dead-letters.js';
export { outboxBacklog, type OutboxBacklog } from './backlog.js';
export { pruneOutbox, type PruneOptions } from './prune.js';
export {
  amqpTransport,
  type AmqpConfirmChannelLike,
  type AmqpPublishOptions,
  type AmqpTransportOptions,
} from './transports/amqp.js';
export {
  jetStreamTransport,
  type JetStreamPublisherLike,
  type JetStreamTransportOptions,
  type NatsHeadersLike,
} from './transports/jetstream.js';
export { webhookTransport, type WebhookTransportOptions } from './transports/webhook.js';
