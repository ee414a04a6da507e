import { announce, type DeliveryOutcome, type InboxConsumerOptions, processDelivery } from '../delivery.js';
import type { InboxSubscription } from '../subscription.js';
import { consumeRules } from '../inbox.js';
import { checkOptions, milliseconds, type OptionRules } from '../../core/option-rules.js';

/** The parts of NATS message headers the consumer reads. */
export interface NatsHeadersReadLike extends Iterable<[string, string[]]> {
  get(name: string): string;
}

/** The members of a JetStream message (`JsMsg`) the consumer calls. */
export interface JetStreamMessageLike {
  readonly subject: string;
  readonly data: Uint8Array;
  readonly headers: NatsHeadersReadLike | undefined;
  readonly redelivered: boolean;
  ack(): void;
  nak(delayMs?: number): void;
  term(): void;
}

/** The member of a JetStream consumer (`js.consumers.get(stream, durable)`) the inbox consumer calls. */
export interface JetStreamConsumerLike<Message extends JetStreamMessageLike> {
  consume(): Promise<AsyncIterable<Message> & { close(): Promise<unknown> }>;
}

export interface JetStreamConsumerOptions<Tx> extends InboxConsumerOptions<Tx> {
  /** How long the server waits before redelivering a failed message. Default 1000 ms. */
  readonly redeliveryDelayMs?: number;
}

export const jetStreamConsumerRules = {
  redeliveryDelayMs: milliseconds(0),
  ...consumeRules,
} as const satisfies OptionRules<JetStreamConsumerOptions<unknown>>;

/**
 * Consumes a durable JetStream consumer through the inbox, one message at a
 * time: a message is acked only after its inbox record and the handler's
 * writes committed, nak'ed for redelivery when either failed, and terminated
 * when it has no `Nats-Msg-Id` or its body is not JSON. A message left
 * unacked (the process died) comes back after the consumer's `ack_wait`.
 */
export async function consumeJetStream<Tx, Message extends JetStreamMessageLike>(
  consumer: JetStreamConsumerLike<Message>,
  options: JetStreamConsumerOptions<Tx>,
): Promise<InboxSubscription> {
  checkOptions(jetStreamConsumerRules, options);
  const messages = await consumer.consume();
  const loop = (async () => {
    for await (const message of messages) {
      const outcome = await processDelivery(options, {
        id: message.headers?.get('Nats-Msg-Id') || undefined,
        topic: message.subject,
        headers: firstValues(message.headers),
        content: message.data,
        redelivered: message.redelivered,
      });
      settle(message, outcome, options.redeliveryDelayMs ?? 1000);
      announce(options, outcome);
    }
  })();
  // Whatever stopped the loop is rethrown by close(), not left unhandled meanwhile.
  loop.catch(() => undefined);
  return {
    async close() {
      await messages.close();
      await loop;
    },
  };
}

function settle(message: JetStreamMessageLike, outcome: DeliveryOutcome, delayMs: number): void {
  try {
    if (outcome.kind === 'processed' || outcome.kind === 'duplicate') message.ack();
    else if (outcome.kind === 'failed') message.nak(delayMs);
    // No reason given: servers before 2.10 ignore a termination that carries one.
    else message.term();
  } catch {
    // The connection closed meanwhile: the server redelivers after ack_wait, and the inbox recognises it.
  }
}

function firstValues(headers: NatsHeadersReadLike | undefined): Record<string, string> {
  const strings: Record<string, string> = {};
  for (const [name, values] of headers ?? []) if (values[0] !== undefined) strings[name] = values[0];
  return strings;
}
