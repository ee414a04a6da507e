/** A verified delivery, to be recorded before its sender is answered. */
export interface WebhookEventInput {
  readonly receiver: string;
  /** The sender's `webhook-id`. */
  readonly id: string;
  /** The body as JSON text, exactly as received. */
  readonly payloadText: string;
  /** The `webhook-timestamp`, in unix seconds. */
  readonly sentAtSeconds: number;
}

/** What recording a delivery did: a new event, a redelivery of a recorded one, or a body the store can never keep. */
export type WebhookRecording = 'recorded' | 'duplicate' | 'unstorable';

/** A recorded event, due for processing. */
export interface StoredWebhookEvent {
  readonly id: string;
  readonly payload: unknown;
  readonly sentAt: Date;
  readonly receivedAt: Date;
  /** Failed processing attempts so far. */
  readonly attempts: number;
}

/**
 * Recorded webhooks. `next` and `markProcessed` run in the caller's
 * transaction (an inbox transaction, `Tx`); the other methods are one
 * statement each. `record` throws the store's failure as it came: the
 * receiver answers it with 503.
 */
export interface WebhookStore<Tx> {
  record(event: WebhookEventInput): Promise<WebhookRecording>;
  /** The receiver's next due event but those in `skip`, locked for the rest of `tx`: workers side by side skip it. */
  next(tx: Tx, receiver: string, skip: readonly string[]): Promise<StoredWebhookEvent | undefined>;
  markProcessed(tx: Tx, receiver: string, id: string): Promise<void>;
  /** A failed processing attempt, tried again after `delaySeconds`. */
  reschedule(receiver: string, id: string, delaySeconds: number, error: string): Promise<void>;
  /** A failed last attempt: the event is parked for an operator. */
  park(receiver: string, id: string, error: string): Promise<void>;
  /** Deletes one batch of processed events older than the retention; how many went. */
  pruneBatch(this: void, olderThanSeconds: number, batchSize: number): Promise<number>;
}
