import { isRetrysafeError, RetrysafeError } from '../core/errors.js';
import { crashPoint } from '../core/crash-point.js';
import type { Reply } from '../core/answer/reply.js';
import { inSpan, type SpanAttributes } from '../core/tracing.js';
import type { Lease, LeasedWrites, StepProgress } from '../store/lease-store.js';
import { downstreamKey } from './downstream-key.js';
import type { Idempotency } from './idempotency.js';
import type { LeaseKeeper } from './lease-keeper.js';
import type { LeasedContext, StepCall, StepOptions } from './leased-route.js';

/** How a leased handler's run ended, before anything is written about it. */
export type HandlerEnd = (
  | { readonly kind: 'answered'; readonly reply: Reply }
  /** The handler threw; `counted` unless the downstream confirmed the failed call had no effect. */
  | { readonly kind: 'threw'; readonly error: unknown; readonly counted: boolean }
  /** Another worker owns the operation now. */
  | { readonly kind: 'lost' }
  /** The handler's steps do not match what earlier attempts started. */
  | { readonly kind: 'changed'; readonly reason: string }
) & {
  /** Whether any attempt may have reached the outside world: then the operation can only be resumed, never dropped. */
  readonly touched: boolean;
};

/**
 * The steps of one run of a leased handler: finished steps come from their
 * recovery points, unfinished ones are reconciled first when an earlier
 * attempt may have started them, and every write is fenced by the lease.
 * It holds what the run learns step by step, and says at the end how it went.
 */
export class LeaseSteps<Tx> {
  private readonly done = new Map<string, unknown>();
  /** Steps an earlier attempt started and did not finish: their calls may have reached the outside world. */
  private readonly unfinished: ReadonlySet<string>;
  private readonly asked = new Set<string>();
  private touched: boolean;
  /** Set when this attempt's steps do not match what earlier attempts started: the operation stops as unknown. */
  private changed: string | undefined;
  /** The error of a step whose call failed and that the downstream confirmed had no effect: such a failure does not count. */
  private withoutEffect: unknown;

  constructor(
    private readonly config: Idempotency<Tx, LeasedWrites<Tx>>,
    private readonly lease: Lease,
    private readonly keeper: LeaseKeeper,
    earlier: ReadonlyMap<string, StepProgress>,
  ) {
    for (const [name, progress] of earlier) if (progress.state === 'finished') this.done.set(name, progress.result);
    this.unfinished = new Set(
      [...earlier].filter(([, progress]) => progress.state === 'started').map(([name]) => name),
    );
    this.touched = earlier.size > 0;
  }

  /** What the handler is given. */
  context<Input>(): LeasedContext<Input, Tx> {
    const { lease, keeper, config } = this;
    const step = async <T>(name: string, kind: 'call' | 'local', run: () => Promise<T>): Promise<T> => {
      keeper.assertHeld();
      if (this.done.has(name)) return this.done.get(name) as T;
      return await inSpan(config.tracing, 'retrysafe step', stepAttributes(lease, name, kind), run);
    };
    return {
      input: lease.input as Input,
      identity: lease.identity,
      attempt: lease.attempt,
      fencingToken: lease.fencingToken,
      signal: keeper.signal,
      step: (name, run, options = {}) => step(name, 'call', () => this.runStep(name, run, options)),
      local: (name, work) => step(name, 'local', () => this.runLocal(name, work)),
    };
  }

  /** How the run ended, given what the handler answered or threw. */
  ended(result: { readonly kind: 'answered'; readonly reply: Reply } | { readonly error: unknown }): HandlerEnd {
    const { touched, changed } = this;
    if ('error' in result && isRetrysafeError(result.error, 'lease-lost')) return { kind: 'lost', touched };
    if (changed !== undefined) return { kind: 'changed', reason: changed, touched };
    if (!('error' in result)) return { kind: 'answered', reply: result.reply, touched };
    return { kind: 'threw', error: result.error, counted: result.error !== this.withoutEffect, touched };
  }

  private call(name: string): StepCall {
    const { lease } = this;
    return {
      idempotencyKey: downstreamKey(lease.identity, name),
      fencingToken: lease.fencingToken,
      signal: this.keeper.signal,
    };
  }

  private async runStep<T>(name: string, run: (call: StepCall) => Promise<T>, options: StepOptions<T>): Promise<T> {
    const { lease, config } = this;
    this.assertSameSteps(name);
    if (lease.attempt > 1 && options.reconcile !== undefined) {
      const found = await options.reconcile(this.call(name));
      if (found.found) return this.record(name, found.result);
    }
    // Counted before the write: a start whose acknowledgement is lost may have committed.
    this.touched = true;
    if (!(await config.store.startStep(lease, name))) throw lost();
    this.keeper.renewed();
    crashPoint('before-step-call');
    const result = await this.callOrReconcile(name, run, options);
    crashPoint('after-step-call');
    const recorded = await this.record(name, result);
    crashPoint('after-checkpoint');
    return recorded;
  }

  /** The step's call; when it fails, the call may have landed before it failed (a dropped connection): ask before giving up. */
  private async callOrReconcile<T>(
    name: string,
    run: (call: StepCall) => Promise<T>,
    options: StepOptions<T>,
  ): Promise<T> {
    try {
      return await run(this.call(name));
    } catch (error) {
      const found =
        options.reconcile === undefined ? undefined : await options.reconcile(this.call(name)).catch(() => undefined);
      if (found?.found === false) this.withoutEffect = error;
      if (found?.found !== true) throw error;
      return found.result;
    }
  }

  private async runLocal<T>(name: string, work: (tx: Tx) => Promise<T>): Promise<T> {
    const { lease, config } = this;
    this.assertSameSteps(name);
    const written = await config.store.checkpointWith(lease, name, async (tx) => {
      const value = await work(tx);
      crashPoint('before-local-commit');
      return value;
    });
    if (!written.owned) throw lost();
    crashPoint('after-local-commit');
    this.touched = true;
    this.keeper.renewed();
    this.done.set(name, written.value);
    return written.value;
  }

  private async record<T>(name: string, result: T): Promise<T> {
    const { lease, config } = this;
    if (!(await config.store.checkpoint(lease, name, result))) throw lost();
    this.keeper.renewed();
    this.done.set(name, result);
    return result;
  }

  /** Refuses a step no earlier attempt started while one that was started is still open and not yet asked for. */
  private assertSameSteps(name: string): void {
    this.asked.add(name);
    const open = [...this.unfinished].find((started) => !this.asked.has(started));
    if (this.unfinished.has(name) || open === undefined) return;
    this.changed =
      `The handler asked for step "${name}", which no earlier attempt started, while step "${open}", started by an earlier attempt, has no result: ` +
      'were the steps renamed or reordered between attempts? Step names are part of the operation; change its @version to change them.';
    throw new RetrysafeError('steps-changed', this.changed);
  }
}

function stepAttributes(lease: Lease, name: string, kind: 'call' | 'local'): SpanAttributes {
  return { 'retrysafe.operation': lease.identity.operation, 'retrysafe.step': name, 'retrysafe.step.kind': kind };
}

function lost(): RetrysafeError {
  return new RetrysafeError('lease-lost', 'Another worker took the lease over; this one may write nothing more.');
}
