import type { FastifyBaseLogger } from 'fastify';
import { type IdempotencyOptions, RecoveryWorker } from 'retrysafe';
import { type Listener, Relay, type Transport } from 'retrysafe/outbox';
import { maintenanceStore, postgresStore, type SqlClient, type SqlDatabase } from 'retrysafe/postgres';
import { Sweeper } from 'retrysafe/retention';
import type { ProviderClient } from '../../provider/client.js';
import { paymentIdempotency } from '../app.js';
import { paymentOperation } from '../routes/create-payment.js';
import { ORDER_CREATED } from './order-created.js';
import { providerEventWorker } from './provider-events.js';

export interface BackgroundWorkOptions {
  readonly database: SqlDatabase<SqlClient>;
  /** Where the relay publishes `order.created`. */
  readonly transport: Transport;
  /** Wakes the relay when an order is enqueued. */
  readonly outboxListener: Listener;
  readonly provider: ProviderClient;
  /** Whether provider webhooks are received, and so must be processed. */
  readonly webhooks: boolean;
  /** The service's retention, which the recovery worker applies to the payments it finishes. */
  readonly idempotency?: Pick<IdempotencyOptions<SqlClient>, 'retention'>;
  /** Pause between two passes of the sweeper. Default 60 s. */
  readonly sweepIntervalMs?: number;
  /** Where failed passes and undelivered messages are reported; each loop goes on. */
  readonly log: FastifyBaseLogger;
}

/** The loops running; `stop` ends them after their current pass. */
export interface BackgroundWork {
  stop(): Promise<void>;
}

/**
 * What the service does besides answering requests, each a loop in this
 * process: the recovery worker finishes payments a crash left half done, the
 * relay publishes the outbox, the webhook worker applies the provider's
 * recorded events, and the sweeper applies the retention.
 */
export function startBackgroundWork(options: BackgroundWorkOptions): BackgroundWork {
  const { database, transport, provider, log } = options;
  const stop = new AbortController();
  const onError = (error: unknown) => log.error({ err: error }, 'background pass failed');
  const recovery = new RecoveryWorker({
    config: paymentIdempotency(postgresStore(database), options.idempotency),
    operations: [paymentOperation(provider)],
  });
  const relay = new Relay({
    database,
    transport,
    topics: [ORDER_CREATED],
    listen: options.outboxListener,
    onError,
    onReport(report) {
      // A failed publish is retried with backoff; a parked one waits for an operator (`deadLetters`, `retryDeadLetter`).
      if (report.failed > 0 || report.parked > 0) log.warn({ relay: report }, 'outbox messages not delivered');
    },
  });
  // Applies the published expiry: expired responses become tombstones, answered 410 `response-expired`.
  const sweeper = new Sweeper({
    store: maintenanceStore(database),
    idleMs: options.sweepIntervalMs ?? 60_000,
    onError,
  });
  const loops = [recovery.run(stop.signal), relay.run(stop.signal), sweeper.run(stop.signal)];
  if (options.webhooks) loops.push(providerEventWorker(database, { onError }).run(stop.signal));
  return {
    async stop() {
      stop.abort();
      await Promise.all(loops);
    },
  };
}
