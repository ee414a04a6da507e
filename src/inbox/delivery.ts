import { crashPoint } from '../core/crash-point.js';
import type { SqlDatabase } from '../store/sql-client.js';
import { consume, type ConsumeOptions, type InboxConsumer } from './inbox.js';
import { readJsonPayload } from './json-payload.js';

/** A message as a consumer's handler sees it. */
export interface InboxMessage {
  /** The publisher's message id (AMQP `messageId`, `Nats-Msg-Id`): the same on every copy. */
  readonly id: string;
  /** Routing key or subject. */
  readonly topic: string;
  readonly headers: Readonly<Record<string, string>>;
  /** The body, parsed as JSON. */
  readonly payload: unknown;
  /** The broker delivered it before. For logs only: the inbox, not this flag, decides whether it runs. */
  readonly redelivered: boolean;
}

/** What became of one delivery, and so how it was settled with the broker. */
export type DeliveryOutcome =
  /** The handler ran and committed; acknowledged. */
  | { readonly kind: 'processed'; readonly id: string }
  /** Processed before; acknowledged without running the handler. */
  | { readonly kind: 'duplicate'; readonly id: string }
  /** The handler or the store failed; nothing committed, handed back for redelivery. */
  | { readonly kind: 'failed'; readonly id: string; readonly error: unknown }
  /** It can never be processed: no usable message id, or a body that is not JSON. Rejected without redelivery. */
  | { readonly kind: 'rejected'; readonly reason: 'missing-id' | 'payload-invalid' };

/** `storeTimeoutMs` bounds each delivery's inbox statements, as for `consume`. */
export interface InboxConsumerOptions<Tx> extends ConsumeOptions {
  readonly database: SqlDatabase<Tx>;
  /** Whose inbox records the messages; see `consume`. */
  readonly consumer: InboxConsumer;
  /** The consumer's work. Write through `tx`: it commits with the inbox record. */
  readonly handler: (message: InboxMessage, tx: Tx) => Promise<void>;
  /** Told about every delivery once it is settled with the broker, for metrics and logs. */
  readonly onSettled?: (outcome: DeliveryOutcome) => void;
}

/** A delivery as a broker adapter reads it, before it is checked. */
export interface RawDelivery {
  readonly id: unknown;
  readonly topic: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly content: Uint8Array;
  readonly redelivered: boolean;
}

/** Tells `onSettled`, keeping a faulty observer from stopping the consumer. */
export function announce<Tx>(options: InboxConsumerOptions<Tx>, outcome: DeliveryOutcome): void {
  try {
    options.onSettled?.(outcome);
  } catch {
    // An observer's failure is its own; the consumer goes on.
  }
}

/** Checks a delivery and runs it through the inbox; the adapter settles it with the broker by the outcome. */
export async function processDelivery<Tx>(
  options: InboxConsumerOptions<Tx>,
  raw: RawDelivery,
): Promise<DeliveryOutcome> {
  const { id } = raw;
  if (typeof id !== 'string' || id === '' || Buffer.byteLength(id) > 255)
    return { kind: 'rejected', reason: 'missing-id' };
  const payload = readJsonPayload(raw.content);
  if (!payload.ok) return { kind: 'rejected', reason: 'payload-invalid' };
  const message: InboxMessage = {
    id,
    topic: raw.topic,
    headers: raw.headers,
    payload: payload.value,
    redelivered: raw.redelivered,
  };
  try {
    const result = await consume(options.database, options.consumer, id, (tx) => options.handler(message, tx), options);
    crashPoint('consumer-after-commit');
    return { kind: result.kind, id };
  } catch (error) {
    return { kind: 'failed', id, error };
  }
}
