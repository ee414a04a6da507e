/** A running broker consumer. */
export interface InboxSubscription {
  /** Stops taking messages and waits for those in hand to be settled; rethrows what stopped the consumer, if anything did. */
  close(): Promise<void>;
}
