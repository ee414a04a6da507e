import type { MaintenanceStore, StoreStats } from '../store/maintenance-store.js';
import { ExposedGauge, type RegistryLike, type Sample } from './exposed-metric.js';

/** The outbox's backlog, as `outboxBacklog(database)` of `retrysafe/outbox` reports it. */
export interface OutboxBacklogLike {
  readonly pending: number;
  readonly dead: number;
  readonly oldestPendingSeconds: number;
}

export interface StoreGaugesOptions {
  /** Prepended to every metric name. Default `retrysafe_`. */
  readonly prefix?: string;
  /** Reads the outbox backlog too, for example `() => outboxBacklog(database)`. */
  readonly outbox?: () => Promise<OutboxBacklogLike>;
}

/**
 * Gauges read from the store on every scrape: the age of the oldest
 * unfinished operation, the unknown outcomes, the expired leases that wait
 * for a recovery worker, the parked webhook events, and the outbox backlog
 * when asked for. Gauges of one
 * source share one query per scrape. When a source cannot answer, its gauges
 * report no sample rather than failing the scrape.
 */
export function collectStoreGauges(
  registry: RegistryLike,
  store: Pick<MaintenanceStore, 'stats'>,
  options: StoreGaugesOptions = {},
): void {
  const prefix = options.prefix ?? 'retrysafe_';
  const gauges = <T>(
    read: () => Promise<T>,
    list: readonly (readonly [name: string, help: string, pick: (value: T) => number])[],
  ): void => {
    const source = sharedPerScrape(read);
    for (const [name, help, pick] of list) {
      const samples = async (): Promise<readonly Sample[]> => {
        const value = await source();
        return value === undefined ? [] : [{ labels: {}, value: pick(value) }];
      };
      new ExposedGauge(`${prefix}${name}`, help, samples).register(registry);
    }
  };
  gauges<StoreStats>(
    () => store.stats(),
    [
      [
        'oldest_in_progress_age_seconds',
        'Age of the oldest unfinished (in_progress) operation; 0 when there is none.',
        (s) => s.oldestInProgressSeconds ?? 0,
      ],
      [
        'unknown_operations',
        'Operations whose outcome is unknown and waits for an operator.',
        (s) => s.unknownOperations,
      ],
      ['expired_leases', 'Unfinished operations whose lease expired: the recovery backlog.', (s) => s.expiredLeases],
      [
        'webhook_events_parked',
        'Webhook events given up on (parked), waiting for an operator to requeue them.',
        (s) => s.parkedWebhookEvents,
      ],
    ],
  );
  const { outbox } = options;
  if (outbox === undefined) return;
  gauges<OutboxBacklogLike>(outbox, [
    ['outbox_pending', 'Outbox messages waiting to be published.', (b) => b.pending],
    ['outbox_dead', 'Outbox messages given up on, waiting for an operator.', (b) => b.dead],
    [
      'outbox_oldest_pending_age_seconds',
      'Age of the oldest pending outbox message; 0 when none waits.',
      (b) => b.oldestPendingSeconds,
    ],
  ]);
}

/**
 * The registry asks every gauge in the same tick: the first ask starts the
 * read, the others share it; a failed read gives undefined.
 */
function sharedPerScrape<T>(read: () => Promise<T>): () => Promise<T | undefined> {
  let pending: Promise<T | undefined> | undefined;
  return () =>
    (pending ??= read()
      .catch(() => undefined)
      .finally(() => {
        pending = undefined;
      }));
}
