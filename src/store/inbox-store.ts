/** Who processed which message: the inbox's key. */
export interface InboxKey {
  readonly consumer: string;
  /** A consumer that rebuilds its projection on purpose moves to a new generation, whose inbox starts empty. */
  readonly generation: number;
  readonly messageId: string;
}

/**
 * The inbox's statements. `record` runs in a transaction `transaction` opened,
 * so the record commits with the consumer's writes in the same `Tx`.
 */
export interface InboxStore<Tx> {
  /**
   * Runs `work` in one transaction that commits when it resolves. The store's
   * own failures (its statements, BEGIN, COMMIT, the connection) throw
   * `RetrysafeError('store-unavailable')`; what `work` throws passes through
   * after the rollback.
   */
  transaction<T>(work: (tx: Tx) => Promise<T>): Promise<T>;
  /**
   * Records in `tx` that the consumer processed the message; false when an
   * earlier delivery was recorded, and the handler must not run. A concurrent
   * delivery of the same message waits here until the first commits or rolls back.
   */
  record(tx: Tx, key: InboxKey): Promise<boolean>;
  /** Deletes one batch of records older than the retention; how many went. */
  pruneBatch(this: void, olderThanSeconds: number, batchSize: number): Promise<number>;
}
