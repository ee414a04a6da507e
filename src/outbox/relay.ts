import { type Clock, systemClock } from '../core/clock.js';
import {
  checkOptions,
  count,
  milliseconds,
  type OptionRules,
  seconds,
  TIMER_MAX_SECONDS,
} from '../core/option-rules.js';
import { randomUUID } from 'node:crypto';
import { crashPoint } from '../core/crash-point.js';
import { type Listener, pollLoop } from '../background/poll-loop.js';
import { afterFailure, resolveRetryPolicy, type RetryPolicy } from '../background/worker-retry.js';
import { errorChain } from '../core/error-chain.js';
import { outboxStore } from '../postgres/postgres-outbox-store.js';
import type { ClaimedMessage, OutboxClaim, OutboxStore } from '../store/outbox-store.js';
import type { SqlDatabase } from '../store/sql-client.js';
import type { Transport } from './transport.js';
import { budgeted } from '../store/budgeted-store.js';
import { defaultStoreTimeoutMs } from '../store/store-clock.js';

export const relayRules = {
  batchSize: count(1, 10_000),
  leaseSeconds: seconds(0.001, TIMER_MAX_SECONDS),
  storeTimeoutMs: milliseconds(1),
  idleMs: milliseconds(1),
} as const satisfies OptionRules<RelayOptions<unknown>>;

export interface RelayOptions<Tx> {
  readonly database: SqlDatabase<Tx>;
  readonly transport: Transport;
  /** Only messages on these topics, so that each transport can have its own relay. Default: every topic. */
  readonly topics?: readonly string[];
  /** Messages claimed per pass. Default 50. */
  readonly batchSize?: number;
  /** How long a claim keeps other relays off a message being published. Default 30 s. */
  readonly leaseSeconds?: number;
  /** How long each store statement may take before the pass fails with `store-unavailable` (told to `onError` by `run`). Default 5000 ms. */
  readonly storeTimeoutMs?: number;
  /** Attempts and backoff; see `defaultRetryPolicy`. */
  readonly retry?: Partial<RetryPolicy>;
  /** `run`: longest rest between passes that found little to do. Default 1000 ms. */
  readonly idleMs?: number;
  /** Times the rests and store budgets. Default `systemClock`; tests pass `manualClock()`. */
  readonly clock?: Clock;
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
  private readonly store: OutboxStore<Tx>;

  constructor(private readonly options: RelayOptions<Tx>) {
    checkOptions(relayRules, options);
    this.retry = resolveRetryPolicy(options.retry);
    this.batchSize = options.batchSize ?? 50;
    this.topics = options.topics === undefined ? null : [...options.topics];
    this.leaseSeconds = options.leaseSeconds ?? 30;
    this.store = budgeted(
      outboxStore(options.database),
      options.storeTimeoutMs ?? defaultStoreTimeoutMs,
      {},
      options.clock,
    );
  }

  /** One pass: park abandoned messages, claim a batch, publish it. Tests and the command line call this. */
  async runOnce(): Promise<RelayReport> {
    const claim: OutboxClaim = {
      batchSize: this.batchSize,
      leaseSeconds: this.leaseSeconds,
      token: randomUUID(),
      topics: this.topics,
      maxAttempts: this.retry.maxAttempts,
    };
    const parked = await this.store.parkAbandoned(claim);
    const claimed = await this.store.claim(claim);
    const tally: Tally = { claimed: claimed.length, delivered: 0, duplicates: 0, failed: 0, parked };
    for (const message of claimed) await this.relay(message, claim.token, tally);
    return tally;
  }

  /** Passes until `signal` aborts, resting between passes that were not full unless a notification comes. */
  run(signal: AbortSignal): Promise<void> {
    const { idleMs = 1000, listen, onReport, onError, clock = systemClock } = this.options;
    const pass = async (): Promise<boolean> => {
      const report = await this.runOnce();
      onReport?.(report);
      return report.claimed >= this.batchSize;
    };
    return pollLoop({ pass, idleMs, listen, onError, clock }, signal);
  }

  private async relay(claimed: ClaimedMessage, token: string, tally: Tally): Promise<void> {
    const { attempts, ...message } = claimed;
    let result;
    try {
      result = await this.options.transport.publish(message);
    } catch (error) {
      const next = afterFailure(this.retry, attempts);
      if (next.kind === 'park') await this.store.park(message.id, token, errorChain(error));
      else await this.store.reschedule(message.id, token, next.delaySeconds, errorChain(error));
      tally[next.kind === 'park' ? 'parked' : 'failed'] += 1;
      return;
    }
    crashPoint('relay-after-publish');
    await this.store.markDelivered(message.id);
    tally.delivered += 1;
    if (result === 'duplicate') tally.duplicates += 1;
  }
}
