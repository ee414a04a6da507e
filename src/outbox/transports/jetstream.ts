import type { OutboxMessage } from '../outbox.js';
import type { PublishResult, Transport } from '../transport.js';

/** The member of NATS message headers (`headers()` from `@nats-io/transport-node`) the transport calls. */
export interface NatsHeadersLike {
  set(name: string, value: string): void;
}

/** The member of a JetStream client (`jetstream(connection)`) the transport calls. */
export interface JetStreamPublisherLike<Headers extends NatsHeadersLike> {
  publish(
    subject: string,
    payload: Uint8Array,
    options: { msgID: string; headers: Headers },
  ): Promise<{ readonly duplicate: boolean }>;
}

export interface JetStreamTransportOptions<Headers extends NatsHeadersLike> {
  /** Makes an empty header set: pass `headers` from `@nats-io/transport-node`. */
  readonly headers: () => Headers;
  /** The subject for a message; default its topic. */
  readonly subject?: (message: OutboxMessage) => string;
}

/**
 * Publishes to NATS JetStream and waits for the stream's ack. The outbox id
 * goes out as `Nats-Msg-Id`, so a copy published again within the stream's
 * duplicate window is dropped by the server (reported as `duplicate`).
 */
export function jetStreamTransport<Headers extends NatsHeadersLike>(
  js: JetStreamPublisherLike<NoInfer<Headers>>,
  options: JetStreamTransportOptions<Headers>,
): Transport {
  return {
    async publish(message: OutboxMessage): Promise<PublishResult> {
      const headers = options.headers();
      for (const [name, value] of Object.entries(message.headers)) headers.set(name, value);
      const subject = options.subject?.(message) ?? message.topic;
      const ack = await js.publish(subject, Buffer.from(JSON.stringify(message.payload), 'utf8'), {
        msgID: message.id,
        headers,
      });
      return ack.duplicate ? 'duplicate' : 'stored';
    },
  };
}
