import { isRetrysafeError, RetrysafeError } from '../core/errors.js';
import type { Idempotency } from './idempotency.js';
import { completionOf, isStoredStatus } from '../core/storage-policy.js';
import { type Reply, toReply } from '../core/answer/reply.js';
import { crashPoint } from '../core/crash-point.js';
import { inSpan, type SpanAttributes } from '../core/tracing.js';
import { forRoute } from './route-attempt.js';
import type { Lease, LeaseStore, StepProgress } from '../store/lease-store.js';
import { downstreamKey } from './downstream-key.js';
import { LeaseKeeper } from './lease-keeper.js';
import { retryDelaySeconds } from './retry-delay.js';
import type { LeasedContext, LeasedOperation, StepCall, StepOptions } from './leased-route.js';

/** How one run of a leased handler ended. */
export type LeaseRun =
  /** Completed: the final answer is stored. */
  | { readonly kind: 'completed'; readonly reply: Reply }
  /** A transient or server-error answer: not stored; the operation was given up or left to resume. */
  | { readonly kind: 'not-stored'; readonly reply: Reply }
  /** The handler threw; the operation was given up or left to resume. */
  | { readonly kind: 'threw'; readonly error: unknown }
  /** Another worker owns the operation now; this one wrote nothing more. */
  | { readonly kind: 'lost' }
  /** The last attempt failed after the outside world may have been touched. */
  | { readonly kind: 'unknown'; readonly reason: string };

/**
 * Runs a leased handler under `lease`, the same way for a client's request
 * and for a recovery worker: finished steps come from their recovery points,
 * unfinished ones are reconciled first when an earlier attempt may have
 * started them, and every write is fenced by the lease.
 */
export async function runWithLease<Input, Tx>(
  given: Idempotency<Tx, LeaseStore<Tx>>,
  operation: LeasedOperation<Input, Tx>,
  lease: Lease,
): Promise<LeaseRun> {
  // A recovery worker applies the route's own settings too.
  const config = forRoute(given, operation);
  const { store, leaseSeconds } = config;
  const earlier = lease.attempt > 1 ? await store.steps(lease) : new Map<string, StepProgress>();
  // Started once nothing can throw before the try below stops it.
  const keeper = new LeaseKeeper(store, lease, leaseSeconds);
  const done = new Map<string, unknown>();
  for (const [name, progress] of earlier) if (progress.state === 'finished') done.set(name, progress.result);
  // Steps an earlier attempt started and did not finish: their calls may have reached the outside world.
  const unsettled = new Set([...earlier].filter(([, progress]) => progress.state === 'started').map(([name]) => name));
  const asked = new Set<string>();
  // Whether any attempt may have reached the outside world: then the operation can only be resumed, never dropped.
  let touched = earlier.size > 0;
  // Set when this attempt's steps do not match what earlier attempts started: the operation stops as unknown.
  let changed: string | undefined;
  // The error of a step whose call failed and that the downstream confirmed had no effect: such a failure does not count.
  let withoutEffect: unknown;
  const began = Date.now();

  const call = (name: string): StepCall => ({
    idempotencyKey: downstreamKey(lease.identity, name),
    fencingToken: lease.fencingToken,
    signal: keeper.signal,
  });
  const record = async <T>(name: string, result: T): Promise<T> => {
    if (!(await store.checkpoint(lease, name, result, leaseSeconds))) throw lost();
    keeper.renewed();
    done.set(name, result);
    return result;
  };
  /** Refuses a step no earlier attempt started while one that was started is still open and not yet asked for. */
  const assertSameSteps = (name: string): void => {
    asked.add(name);
    const open = [...unsettled].find((started) => !asked.has(started));
    if (unsettled.has(name) || open === undefined) return;
    changed =
      `The handler asked for step "${name}", which no earlier attempt started, while step "${open}", started by an earlier attempt, has no result: ` +
      'were the steps renamed or reordered between attempts? Step names are part of the operation; change its @version to change them.';
    throw new RetrysafeError('steps-changed', changed);
  };
  const stepAttributes = (name: string, kind: 'call' | 'local'): SpanAttributes => ({
    'retrysafe.operation': lease.identity.operation,
    'retrysafe.step': name,
    'retrysafe.step.kind': kind,
  });
  const context: LeasedContext<Input, Tx> = {
    input: lease.input as Input,
    identity: lease.identity,
    attempt: lease.attempt,
    fencingToken: lease.fencingToken,
    signal: keeper.signal,
    async step<T>(name: string, run: (call: StepCall) => Promise<T>, options: StepOptions<T> = {}): Promise<T> {
      keeper.assertHeld();
      if (done.has(name)) return done.get(name) as T;
      return await inSpan(config.tracing, 'retrysafe step', stepAttributes(name, 'call'), () =>
        runStep(name, run, options),
      );
    },
    async local<T>(name: string, work: (tx: Tx) => Promise<T>): Promise<T> {
      keeper.assertHeld();
      if (done.has(name)) return done.get(name) as T;
      return await inSpan(config.tracing, 'retrysafe step', stepAttributes(name, 'local'), () => runLocal(name, work));
    },
  };

  async function runStep<T>(name: string, run: (call: StepCall) => Promise<T>, options: StepOptions<T>): Promise<T> {
    assertSameSteps(name);
    if (lease.attempt > 1 && options.reconcile !== undefined) {
      const found = await options.reconcile(call(name));
      if (found.found) return record(name, found.result);
    }
    // Counted before the write: a start whose acknowledgement is lost may have committed.
    touched = true;
    if (!(await store.startStep(lease, name, leaseSeconds))) throw lost();
    keeper.renewed();
    crashPoint('before-step-call');
    let result: T;
    try {
      result = await run(call(name));
    } catch (error) {
      // The call may have landed before it failed (a dropped connection): ask before giving up.
      const found =
        options.reconcile === undefined ? undefined : await options.reconcile(call(name)).catch(() => undefined);
      if (found?.found === false) withoutEffect = error;
      if (found?.found !== true) throw error;
      result = found.result;
    }
    crashPoint('after-step-call');
    const recorded = await record(name, result);
    crashPoint('after-checkpoint');
    return recorded;
  }

  async function runLocal<T>(name: string, work: (tx: Tx) => Promise<T>): Promise<T> {
    assertSameSteps(name);
    const outcome = await store.checkpointWith(lease, name, leaseSeconds, async (tx) => {
      const value = await work(tx);
      crashPoint('before-local-commit');
      return value;
    });
    if (!outcome.owned) throw lost();
    crashPoint('after-local-commit');
    touched = true;
    keeper.renewed();
    done.set(name, outcome.value);
    return outcome.value;
  }

  try {
    const reply = toReply(await operation.handler(context));
    keeper.stop();
    if (changed !== undefined) return await stop(changed);
    const stored = isStoredStatus(reply.status, config.policy);
    config.emit({ type: 'finished', identity: lease.identity, mode: 'leased', status: reply.status, stored });
    if (!stored) return (await giveUp(`The handler answered ${reply.status}.`, true)) ?? { kind: 'not-stored', reply };
    crashPoint('before-complete');
    const completed = await store.completeLease(
      lease,
      completionOf(reply, config.policy, config.retentionFor(lease.identity)),
    );
    crashPoint('after-complete');
    return completed ? { kind: 'completed', reply } : fenced();
  } catch (error) {
    keeper.stop();
    if (isRetrysafeError(error, 'lease-lost')) return fenced();
    if (isRetrysafeError(error, 'store-unavailable')) throw error;
    if (changed !== undefined) return stop(changed);
    return (
      (await giveUp(error instanceof Error ? error.message : String(error), error !== withoutEffect)) ?? {
        kind: 'threw',
        error,
      }
    );
  }

  /**
   * Only a first attempt that never started a step may be dropped: nothing of
   * it can have reached the outside world. Any other failure keeps the
   * record: released for a later attempt after a backoff, or `unknown` once
   * the failures that count or the time since the claim run out.
   */
  async function giveUp(reason: string, counted: boolean): Promise<LeaseRun | undefined> {
    if (lease.attempt === 1 && !touched) return (await store.abandon(lease)) ? undefined : fenced();
    const failures = lease.failures + (counted ? 1 : 0);
    if (failures >= config.maxAttempts) {
      return stop(
        `${failures} of ${config.maxAttempts} attempts failed after a step may have taken effect; the last (attempt ${lease.attempt}): ${reason}`,
      );
    }
    if (lease.ageSeconds + (Date.now() - began) / 1000 >= config.giveUpAfterSeconds) {
      return stop(
        `Attempt ${lease.attempt} failed past the give-up horizon of ${config.giveUpAfterSeconds} s after a step may have taken effect: ${reason}`,
      );
    }
    const delaySeconds = retryDelaySeconds(lease.attempt, config.retryDelay);
    if (!(await store.release(lease, { delaySeconds, counted }))) return fenced();
    config.emit({
      type: 'released',
      identity: lease.identity,
      attempt: lease.attempt,
      retryInSeconds: delaySeconds,
      reason,
    });
    return undefined;
  }

  /** Marks the operation `unknown`: an operator has to find out what happened. */
  async function stop(reason: string): Promise<LeaseRun> {
    // The stored reason is at most 4096 bytes; an error message can be longer.
    const why = reason.length > 1000 ? `${reason.slice(0, 999)}…` : reason;
    if (!(await store.markUnknown(lease, why))) return fenced();
    config.emit({ type: 'unknown', identity: lease.identity, reason: why });
    return { kind: 'unknown', reason: why };
  }

  function fenced(): LeaseRun {
    config.emit({ type: 'fenced', identity: lease.identity, attempt: lease.attempt });
    return { kind: 'lost' };
  }
}

function lost(): RetrysafeError {
  return new RetrysafeError('lease-lost', 'Another worker took the lease over; this one may write nothing more.');
}
