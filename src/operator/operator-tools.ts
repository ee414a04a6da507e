import type { Idempotency } from '../modes/idempotency.js';
import type { MaintenanceStore } from '../store/maintenance-store.js';
import type { OperatorStore, UnknownActions } from '../store/operator-store.js';
import type { OutboxBacklog } from '../store/outbox-store.js';
import type { RecordReader } from '../store/record-reader.js';

/**
 * What resolving and retrying an unknown operation need of the application's
 * configuration: its store (so that its decorators apply: an encrypted store
 * seals a resolved body), its storage policy and its retention.
 */
export type ActionConfig<Tx> = Pick<
  Idempotency<Tx, UnknownActions & RecordReader>,
  'store' | 'policy' | 'retentionFor'
>;

/** The store's health as an operator reads it: its counts, what needs attention, the outbox's backlog. */
export interface StoreHealth extends Pick<MaintenanceStore, 'stats' | 'stuck'> {
  outboxBacklog(): Promise<OutboxBacklog>;
}

/**
 * The operator seam: everything the console and the command line's operator
 * commands read and do, and nothing else. `postgresOperatorTools(database)`
 * (`retrysafe/postgres`) builds it on PostgreSQL; any implementation of these
 * three parts serves the console as well.
 */
export interface OperatorTools<Tx> {
  /** The operators' reads, and the audited actions no request makes (purge, requeue). */
  readonly operators: OperatorStore;
  readonly health: StoreHealth;
  /** Resolve and retry run through this configuration's store. */
  readonly config: ActionConfig<Tx>;
}
