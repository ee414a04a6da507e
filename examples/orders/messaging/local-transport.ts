import type { OutboxMessage, PublishResult, Transport } from 'retrysafe/outbox';

/** A consumer in this process that applies a message through its inbox: `duplicate` when it had applied it before. */
export type LocalConsumer = (message: OutboxMessage) => Promise<{ readonly kind: 'processed' | 'duplicate' }>;

/**
 * A transport without a broker: publishing hands the message straight to a
 * consumer in the same process. The publish resolves once the consumer has
 * committed, so the relay marks a message delivered only after its effect; a
 * relay that stops in between publishes it again later, and the consumer's
 * inbox answers `duplicate`. A consumer that throws fails the publish, which
 * the relay retries with backoff.
 */
export function localTransport(consumer: LocalConsumer): Transport {
  return {
    async publish(message: OutboxMessage): Promise<PublishResult> {
      const result = await consumer(message);
      return result.kind === 'duplicate' ? 'duplicate' : 'stored';
    },
  };
}
