import { consumeInTransaction, type InboxResult } from '../inbox/inbox.js';
import { pollLoop } from '../outbox/poll-loop.js';
import { afterFailure, errorText, resolveRetryPolicy, type RetryPolicy } from '../outbox/retry-policy.js';
import { storeRows } from '../outbox/store-rows.js';
import { MARK_WEBHOOK_PROCESSED, NEXT_WEBHOOK_EVENT, PARK_WEBHOOK_EVENT, RESCHEDULE_WEBHOOK_EVENT } from '../postgres/sql/inbox.js';
import { inTransaction, storePart } from '../postgres/transaction.js';
import type { Settlement } from '../store/atomic-store.js';
import type { SqlDatabase } from '../store/sql-client.js';

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
  /** Attempts and backoff for a failing handler; see `defaultRetryPolicy`. */
  readonly retry?: Partial<RetryPolicy>;
  /** `run`: rest between passes that found little to do. Default 1000 ms. */
  readonly idleMs?: number;
  /** `run`: told what each pass did, for metrics and logs. */
  readonly onReport?: (report: WebhookWorkerReport) => void;
  /** `run`: told about failed passes. */
  readonly onError?: (error: unknown) => void;
}

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

interface EventRow {
  readonly id: string;
  readonly payload: unknown;
  readonly sent_at: Date;
  readonly received_at: Date;
  readonly attempts: number;
}

type Step = { readonly kind: 'idle' } | { readonly kind: 'done'; readonly result: InboxResult<void> } | { readonly kind: 'threw'; readonly row: EventRow; readonly error: unknown };

/**
 * Processes recorded webhooks through the inbox. Each event gets its own
 * transaction, which locks the event (workers side by side skip it), records
 * it in the inbox, runs the handler and marks the event processed: all of it
 * commits, or none. A failing handler is retried with backoff, then parked.
 */
export class WebhookWorker<Tx> {
  private readonly retry: RetryPolicy;

  constructor(private readonly options: WebhookWorkerOptions<Tx>) {
    this.retry = resolveRetryPolicy(options.retry);
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
      else tally[await this.recordFailure(step.row, step.error)] += 1;
    }
    return tally;
  }

  /** Passes until `signal` aborts. */
  run(signal: AbortSignal): Promise<void> {
    const { idleMs = 1000, onReport, onError, batchSize = 20 } = this.options;
    const pass = async (): Promise<boolean> => {
      const report = await this.runOnce();
      onReport?.(report);
      return report.processed + report.duplicates + report.failed + report.parked >= batchSize;
    };
    return pollLoop({ pass, idleMs, onError }, signal);
  }

  private async processNext(tried: string[]): Promise<Step> {
    const { database, receiver, handler } = this.options;
    let taken: EventRow | undefined;
    try {
      return await inTransaction(database, async (sql, tx): Promise<Settlement<Step>> => {
        [taken] = (await storePart(() => sql.query<EventRow>(NEXT_WEBHOOK_EVENT, [receiver, tried]))).rows;
        const row = taken;
        if (row === undefined) return { commit: false, value: { kind: 'idle' } };
        tried.push(row.id);
        const event: ReceivedWebhook = { id: row.id, payload: row.payload, sentAt: row.sent_at, receivedAt: row.received_at, attempt: row.attempts + 1 };
        const result = await consumeInTransaction(sql, tx, receiver, row.id, (handlerTx) => handler(event, handlerTx));
        await storePart(() => sql.query(MARK_WEBHOOK_PROCESSED, [receiver, row.id]));
        return { commit: true, value: { kind: 'done', result } };
      });
    } catch (error) {
      // Without an event in hand it was the store that failed: let the pass fail.
      if (taken === undefined) throw error;
      return { kind: 'threw', row: taken, error };
    }
  }

  private async recordFailure(row: EventRow, error: unknown): Promise<'failed' | 'parked'> {
    const { database, receiver } = this.options;
    const next = afterFailure(this.retry, row.attempts + 1);
    if (next.kind === 'park') await storeRows(database, PARK_WEBHOOK_EVENT, [receiver, row.id, errorText(error)]);
    else await storeRows(database, RESCHEDULE_WEBHOOK_EVENT, [receiver, row.id, next.delaySeconds, errorText(error)]);
    return next.kind === 'park' ? 'parked' : 'failed';
  }
}
