import { randomUUID } from 'node:crypto';
import { crashPoint } from '../core/crash-point.js';
import { RetrysafeError } from '../core/errors.js';
import { CLAIM, MARK_DELIVERED, PARK, PARK_ABANDONED, RESCHEDULE } from '../postgres/sql/outbox.js';
import type { SqlDatabase } from '../store/sql-client.js';
import type { OutboxMessage } from './outbox.js';
import { type Listener, pollLoop } from './poll-loop.js';
import { afterFailure, errorText, resolveRetryPolicy, type RetryPolicy } from './retry-policy.js';
import { storeRows } from './store-rows.js';
import type { Transport } from './transport.js';

export interface RelayOptions<Tx> {
  readonly database: SqlDatabase<Tx>;
  readonly transport: Transport;
  /** Only messages on these topics, so that each transport can have its own relay. Default: every topic. */
  readonly topics?: readonly string[];
  /** Messages claimed per pass. Default 50. */
  readonly batchSize?: number;
  /** How long a claim keeps other relays off a message being published. Default 30 s. */
  readonly leaseSeconds?: number;
  /** Attempts and backoff; see `defaultRetryPolicy`. */
  readonly retry?: Partial<RetryPolicy>;
  /** `run`: longest rest between passes that found little to do. Default 1000 ms. */
  readonly idleMs?: number;
  /** `run`: wakes the relay when a message is enqueued (`pgListener`, `pgliteListener`); polling goes on regardless. */
  readonly listen?: Listener;
  /** `run`: told what each pass did, for metrics and logs. */
  readonly onReport?: (report: RelayReport) => void;
  /** `run`: told about failed passes, which are retried on the next pass. */
  readonly onError?: (error: unknown) => void;
}

/** What one pass did, by message. */
export interface RelayReport {
  readonly claimed: number;
  /** Published and marked delivered, duplicates included. */
  readonly delivered: number;
  /** Of the delivered, those the broker recognised as a copy of an earlier publish. */
  readonly duplicates: number;
  /** Failed to publish; tried again after a backoff. */
  readonly failed: number;
  /** Parked as dead letters: out of attempts. */
  readonly parked: number;
}

interface ClaimedRow {
  readonly id: string;
  readonly topic: string;
  readonly headers: Record<string, string>;
  readonly payload: unknown;
  readonly attempts: number;
}

type Tally = { -readonly [K in keyof RelayReport]: RelayReport[K] };

/**
 * Publishes outbox messages. Each pass claims a batch (relays side by side
 * take different messages), publishes every message outside any transaction
 * and marks it delivered. A relay that dies between the publish and the mark
 * leaves the message to be published again, under the same id, once its
 * claim runs out: delivery is at least once, and consumers deduplicate.
 */
export class Relay<Tx> {
  private readonly retry: RetryPolicy;
  private readonly batchSize: number;
  private readonly topics: string[] | null;
  private readonly leaseSeconds: number;

  constructor(private readonly options: RelayOptions<Tx>) {
    this.retry = resolveRetryPolicy(options.retry);
    this.batchSize = options.batchSize ?? 50;
    this.topics = options.topics === undefined ? null : [...options.topics];
    this.leaseSeconds = options.leaseSeconds ?? 30;
    if (!Number.isInteger(this.batchSize) || this.batchSize < 1) throw new RetrysafeError('misuse', 'batchSize must be a positive integer.');
    if (!(this.leaseSeconds > 0)) throw new RetrysafeError('misuse', 'leaseSeconds must be a positive number.');
  }

  /** One pass: park abandoned messages, claim a batch, publish it. Tests and the command line call this. */
  async runOnce(): Promise<RelayReport> {
    const { database } = this.options;
    const token = randomUUID();
    const abandoned = await storeRows(database, PARK_ABANDONED, [this.retry.maxAttempts, this.batchSize, this.topics]);
    const claimed = await storeRows<ClaimedRow>(database, CLAIM, [this.batchSize, this.leaseSeconds, token, this.topics, this.retry.maxAttempts]);
    const tally: Tally = { claimed: claimed.length, delivered: 0, duplicates: 0, failed: 0, parked: abandoned.length };
    for (const row of claimed) await this.relay(row, token, tally);
    return tally;
  }

  /** Passes until `signal` aborts, resting between passes that were not full unless a notification comes. */
  run(signal: AbortSignal): Promise<void> {
    const { idleMs = 1000, listen, onReport, onError } = this.options;
    const pass = async (): Promise<boolean> => {
      const report = await this.runOnce();
      onReport?.(report);
      return report.claimed >= this.batchSize;
    };
    return pollLoop({ pass, idleMs, listen, onError }, signal);
  }

  private async relay(row: ClaimedRow, token: string, tally: Tally): Promise<void> {
    const message: OutboxMessage = { id: row.id, topic: row.topic, headers: row.headers, payload: row.payload };
    let result;
    try {
      result = await this.options.transport.publish(message);
    } catch (error) {
      const next = afterFailure(this.retry, row.attempts);
      if (next.kind === 'park') await storeRows(this.options.database, PARK, [row.id, token, errorText(error)]);
      else await storeRows(this.options.database, RESCHEDULE, [row.id, token, next.delaySeconds, errorText(error)]);
      tally[next.kind === 'park' ? 'parked' : 'failed'] += 1;
      return;
    }
    crashPoint('relay-after-publish');
    await storeRows(this.options.database, MARK_DELIVERED, [row.id]);
    tally.delivered += 1;
    if (result === 'duplicate') tally.duplicates += 1;
  }
}
