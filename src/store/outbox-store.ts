/** A message as the relay hands it to a transport. */
export interface OutboxMessage {
  /** A uuid, the same on every publish of this message: consumers deduplicate by it. */
  readonly id: string;
  /** Routing key, subject or webhook event name, as the transport reads it. */
  readonly topic: string;
  readonly headers: Readonly<Record<string, string>>;
  /** Any JSON value. */
  readonly payload: unknown;
}

/** A message claimed for one publish attempt. */
export interface ClaimedMessage extends OutboxMessage {
  /** Attempts so far, this one included. */
  readonly attempts: number;
}

/** A message the relay gave up on after its last attempt. It stays until an operator retries it. */
export interface DeadLetter extends OutboxMessage {
  readonly attempts: number;
  /** The last publish failure. */
  readonly lastError: string | null;
  readonly createdAt: Date;
  readonly parkedAt: Date;
}

/** The outbox's backlog, for monitoring. */
export interface OutboxBacklog {
  /** Messages waiting to be published. */
  readonly pending: number;
  /** Dead letters waiting for an operator. */
  readonly dead: number;
  /** Age of the oldest pending message, 0 when none waits. */
  readonly oldestPendingSeconds: number;
}

/** Which messages one relay pass may take, and for how long. */
export interface OutboxClaim {
  readonly batchSize: number;
  /** How long the claim keeps other relays off a message being published. */
  readonly leaseSeconds: number;
  /** Names this pass's claim: only its holder may record a failed publish. */
  readonly token: string;
  /** Only these topics; null for all. */
  readonly topics: readonly string[] | null;
  /** Attempts in all before a message is parked. */
  readonly maxAttempts: number;
}

/**
 * The outbox's statements. `enqueue` runs in the caller's transaction (`Tx`,
 * the data layer's own); every other method is one statement of its own and
 * throws `RetrysafeError('store-unavailable')` when the store fails.
 */
export interface OutboxStore<Tx> {
  /** Adds a message in `tx`; a message whose id is already there is left as it is. Published only if `tx` commits. */
  enqueue(tx: Tx, message: OutboxMessage): Promise<void>;
  /** Parks messages that used up their attempts without being marked published or failed (their relay died every time); how many. */
  parkAbandoned(claim: OutboxClaim): Promise<number>;
  /** Claims due messages; relays side by side take different ones. */
  claim(claim: OutboxClaim): Promise<readonly ClaimedMessage[]>;
  /** The broker has the message, whoever holds its claim. */
  markDelivered(id: string): Promise<void>;
  /** A failed publish, tried again after `delaySeconds`; only the claim's holder may. */
  reschedule(id: string, token: string, delaySeconds: number, error: string): Promise<void>;
  /** A failed last attempt: the message becomes a dead letter; only the claim's holder may. */
  park(id: string, token: string, error: string): Promise<void>;
  /** Dead letters, most recently parked first. */
  deadLetters(limit: number, topic: string | null): Promise<readonly DeadLetter[]>;
  /** Puts a dead letter back in line with a fresh count of attempts; false when `id` is not a dead letter. */
  retryDeadLetter(id: string): Promise<boolean>;
  backlog(): Promise<OutboxBacklog>;
  /** Deletes one batch of delivered messages older than the retention; how many went. */
  pruneBatch(this: void, olderThanSeconds: number, batchSize: number): Promise<number>;
}
