import { checkOptions, count, milliseconds, type OptionRules } from '../core/option-rules.js';
import { randomUUID } from 'node:crypto';
import { pollLoop } from '../background/poll-loop.js';
import type { Idempotency } from '../modes/idempotency.js';
import type { ExpiredLease, ExpiredLeases, LeaseClaims } from '../store/lease-store.js';
import { type LeasedRunStore, runWithLease } from '../modes/run-with-lease.js';
import type { LeasedOperation } from '../modes/leased-route.js';
import { traceAttempt } from '../modes/traced-attempt.js';

export interface RecoveryWorkerOptions<Tx> {
  readonly config: Idempotency<Tx, ExpiredLeases & LeaseClaims & LeasedRunStore<Tx>>;
  /** The leased operations this worker can complete; others are left for a worker that knows them. */
  readonly operations: readonly LeasedOperation<unknown, Tx>[];
  /** Expired leases taken per pass. Default 20. */
  readonly batchSize?: number;
  /** Pause after a pass that found fewer expired leases than a batch, in ms. Default 1000. */
  readonly idleMs?: number;
  /** `run`: told about failed passes, which are retried on the next pass. */
  readonly onError?: (error: unknown) => void;
}

export const recoveryWorkerRules = {
  batchSize: count(1, 10_000),
  idleMs: milliseconds(1),
} as const satisfies OptionRules<RecoveryWorkerOptions<unknown>>;

/** What one pass did, by expired lease. */
export interface RecoveryReport {
  readonly examined: number;
  /** Completed with the response the handler gives. */
  readonly completed: number;
  /** Marked `unknown`: a transparent route, or the last attempt failed after a step may have taken effect. */
  readonly unknown: number;
  /** Taken over and run, but not completed: given up (nothing happened) or left to resume later. */
  readonly incomplete: number;
  /** Another worker won the take-over or took the lease meanwhile. */
  readonly lost: number;
}

type Tally = { -readonly [K in keyof RecoveryReport]: RecoveryReport[K] };

/**
 * Completes operations whose worker stopped renewing its lease (a crash, a
 * pause): takes each over by compare-and-swap, so of several racing workers
 * exactly one proceeds, reconciles its unfinished steps and completes it, or
 * marks it `unknown`. A route retrysafe cannot re-run (transparent mode)
 * becomes `unknown` at once, since it may or may not have had its effect.
 */
export class RecoveryWorker<Tx> {
  private readonly operations: ReadonlyMap<string, LeasedOperation<unknown, Tx>>;

  constructor(private readonly options: RecoveryWorkerOptions<Tx>) {
    checkOptions(recoveryWorkerRules, options);
    this.operations = new Map(options.operations.map((operation) => [operation.operation, operation]));
  }

  /** One pass over the expired leases; tests and the command line call this. */
  async runOnce(): Promise<RecoveryReport> {
    const tally: Tally = { examined: 0, completed: 0, unknown: 0, incomplete: 0, lost: 0 };
    const { config } = this.options;
    const expired = await config.store.expiredLeases(this.options.batchSize ?? 20, [...this.operations.keys()]);
    for (const candidate of expired) {
      tally.examined += 1;
      tally[await this.recover(candidate)] += 1;
    }
    return tally;
  }

  /**
   * Passes until `signal` aborts. It goes on at once only after a full batch,
   * when more may be waiting; otherwise it rests. An operation whose attempt
   * failed is not listed again before its backoff has passed.
   */
  run(signal: AbortSignal): Promise<void> {
    const { batchSize = 20, idleMs = 1000, onError } = this.options;
    const pass = async (): Promise<boolean> => (await this.runOnce()).examined >= batchSize;
    return pollLoop({ pass, idleMs, onError, clock: this.options.config.clock }, signal);
  }

  /** Takes `candidate` over and runs it, in an attempt span like a request's. */
  private recover(candidate: ExpiredLease): Promise<Exclude<keyof RecoveryReport, 'examined'>> {
    return traceAttempt(
      this.options.config,
      candidate.identity.operation,
      candidate.mode,
      (config) => this.takeOver(config, candidate),
      'recovery',
    );
  }

  private async takeOver(
    config: Idempotency<Tx, ExpiredLeases & LeaseClaims & LeasedRunStore<Tx>>,
    candidate: ExpiredLease,
  ): Promise<Exclude<keyof RecoveryReport, 'examined'>> {
    const operation = this.operations.get(candidate.identity.operation);
    const lease = await config.store.takeOver(
      candidate.identity,
      candidate.fencingToken,
      randomUUID(),
      config.leaseSeconds,
    );
    if (lease === undefined) return 'lost';
    config.emit({ type: 'taken-over', identity: lease.identity, attempt: lease.attempt, by: 'recovery' });
    if (operation === undefined || candidate.mode !== 'leased') {
      const reason = 'The process running this route stopped before it finished; whether it took effect is not known.';
      if (!(await config.store.markUnknown(lease, reason))) return 'lost';
      config.emit({ type: 'unknown', identity: lease.identity, reason });
      return 'unknown';
    }
    const run = await runWithLease(config, operation, lease);
    return run.kind === 'threw' || run.kind === 'not-stored' ? 'incomplete' : run.kind;
  }
}
