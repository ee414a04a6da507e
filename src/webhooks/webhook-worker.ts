import { type Clock, systemClock } from '../core/clock.js';
import { checkOptions, count, milliseconds, type OptionRules } from '../core/option-rules.js';
import { pollLoop } from '../background/poll-loop.js';
import { afterFailure, resolveRetryPolicy, type RetryPolicy } from '../background/worker-retry.js';
import { errorChain } from '../core/error-chain.js';
import { budgetedInbox, consumeIn, inboxKey, type InboxResult } from '../inbox/inbox.js';
import { inboxStore } from '../postgres/postgres-inbox-store.js';
import { webhookStore } from '../postgres/postgres-webhook-store.js';
import type { InboxStore } from '../store/inbox-store.js';
import type { SqlDatabase } from '../store/sql-client.js';
import type { StoredWebhookEvent, WebhookStore } from '../store/webhook-store.js';
import { budgeted } from '../store/budgeted-store.js';
import { defaultStoreTimeoutMs } from '../store/store-clock.js';

/** A recorded webhook, as the handler sees it. */
export interface ReceivedWebhook {
  /** The sender's `webhook-id`. */
  readonly id: string;
  /** The parsed body. */
  readonly payload: unknown;
  /**
   * The `webhook-timestamp` of the delivery that was recorded: when that
   * attempt was signed, not when the event happened. Events can arrive out of
   * order; order them by what their payload says (a version, a time).
   */
  readonly sentAt: Date;
  readonly receivedAt: Date;
  /** 1 for the first processing attempt. */
  readonly attempt: number;
}

export interface WebhookWorkerOptions<Tx> {
  readonly database: SqlDatabase<Tx>;
  /** The receiver whose events this worker processes; also its consumer name in the inbox. */
  readonly receiver: string;
  /** The processing. Write through `tx`: it commits with the inbox record and the event's `processed` mark. */
  readonly handler: (event: ReceivedWebhook, tx: Tx) => Promise<void>;
  /** Events processed per pass. Default 20. */
  readonly batchSize?: number;
  /** How long each store statement (the handler has none of it) may take before the pass fails with `store-unavailable` (told to `onError` by `run`). Default 5000 ms. */
  readonly storeTimeoutMs?: number;
  /** Attempts and backoff for a failing handler; see `defaultRetryPolicy`. */
  readonly retry?: Partial<RetryPolicy>;
  /** `run`: rest between passes that found little to do. Default 1000 ms. */
  readonly idleMs?: number;
  /** Times the rests and store budgets. Default `systemClock`; tests pass `manualClock()`. */
  readonly clock?: Clock;
  /** `run`: told what each pass did, for metrics and logs. */
  readonly onReport?: (report: WebhookWorkerReport) => void;
  /** `run`: told about failed passes. */
  readonly onError?: (error: unknown) => void;
}

export const webhookWorkerRules = {
  batchSize: count(1, 10_000),
  storeTimeoutMs: milliseconds(1),
  idleMs: milliseconds(1),
} as const satisfies OptionRules<WebhookWorkerOptions<unknown>>;

/** What one pass did, by event. */
export interface WebhookWorkerReport {
  readonly processed: number;
  /** Already in the inbox: processed before, so only marked. */
  readonly duplicates: number;
  /** The handler failed; tried again after a backoff. */
  readonly failed: number;
  /** Out of attempts: parked for an operator. */
  readonly parked: number;
}

type Step =
  | { readonly kind: 'idle' }
  | { readonly kind: 'done'; readonly result: InboxResult<void> }
  | { readonly kind: 'threw'; readonly event: StoredWebhookEvent; readonly error: unknown };

/**
 * Processes recorded webhooks through the inbox. Each event gets its own
 * transaction, which locks the event (workers side by side skip it), records
 * it in the inbox, runs the handler and marks the event processed: all of it
 * commits, or none. A failing handler is retried with backoff, then parked.
 */
export class WebhookWorker<Tx> {
  private readonly retry: RetryPolicy;
  private readonly inbox: InboxStore<Tx>;
  private readonly events: WebhookStore<Tx>;

  constructor(private readonly options: WebhookWorkerOptions<Tx>) {
    checkOptions(webhookWorkerRules, options);
    this.retry = resolveRetryPolicy(options.retry);
    const budgetMs = options.storeTimeoutMs ?? defaultStoreTimeoutMs;
    const inbox = inboxStore(options.database);
    this.inbox = budgetedInbox(inbox, budgetMs, options.clock);
    this.events = budgeted(webhookStore(options.database), budgetMs, {}, options.clock);
  }

  /** Up to `batchSize` due events, one transaction each. Tests and the command line call this. */
  async runOnce(): Promise<WebhookWorkerReport> {
    const tally = { processed: 0, duplicates: 0, failed: 0, parked: 0 };
    // A failed event may be due again at once (full jitter can wait 0 ms): once per pass is enough.
    const tried: string[] = [];
    for (let i = 0; i < (this.options.batchSize ?? 20); i++) {
      const step = await this.processNext(tried);
      if (step.kind === 'idle') break;
      if (step.kind === 'done') tally[step.result.kind === 'processed' ? 'processed' : 'duplicates'] += 1;
      else tally[await this.recordFailure(step.event, step.error)] += 1;
    }
    return tally;
  }

  /** Passes until `signal` aborts. */
  run(signal: AbortSignal): Promise<void> {
    const { idleMs = 1000, onReport, onError, batchSize = 20, clock = systemClock } = this.options;
    const pass = async (): Promise<boolean> => {
      const report = await this.runOnce();
      onReport?.(report);
      return report.processed + report.duplicates + report.failed + report.parked >= batchSize;
    };
    return pollLoop({ pass, idleMs, onError, clock }, signal);
  }

  private async processNext(tried: string[]): Promise<Step> {
    const { receiver, handler } = this.options;
    let taken: StoredWebhookEvent | undefined;
    try {
      return await this.inbox.transaction(async (tx): Promise<Step> => {
        taken = await this.events.next(tx, receiver, tried);
        const stored = taken;
        // Nothing due: the transaction only read, so committing it is as good as rolling back.
        if (stored === undefined) return { kind: 'idle' };
        tried.push(stored.id);
        const event: ReceivedWebhook = {
          id: stored.id,
          payload: stored.payload,
          sentAt: stored.sentAt,
          receivedAt: stored.receivedAt,
          attempt: stored.attempts + 1,
        };
        const result = await consumeIn(this.inbox, tx, inboxKey(receiver, stored.id), (handlerTx) =>
          handler(event, handlerTx),
        );
        await this.events.markProcessed(tx, receiver, stored.id);
        return { kind: 'done', result };
      });
    } catch (error) {
      // Without an event in hand it was the store that failed: let the pass fail.
      if (taken === undefined) throw error;
      return { kind: 'threw', event: taken, error };
    }
  }

  private async recordFailure(event: StoredWebhookEvent, error: unknown): Promise<'failed' | 'parked'> {
    const { receiver } = this.options;
    const next = afterFailure(this.retry, event.attempts + 1);
    if (next.kind === 'park') await this.events.park(receiver, event.id, errorChain(error));
    else await this.events.reschedule(receiver, event.id, next.delaySeconds, errorChain(error));
    return next.kind === 'park' ? 'parked' : 'failed';
  }
}
