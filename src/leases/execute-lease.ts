import { isRetrysafeError, RetrysafeError } from '../core/errors.js';
import type { Idempotency } from '../core/idempotency.js';
import { completionOf, isStoredStatus } from '../core/policy.js';
import { type Reply, toReply } from '../core/reply.js';
import { withinStoreTimeout } from '../core/store-clock.js';
import { crashPoint } from '../core/crash-point.js';
import { inSpan, type SpanAttributes } from '../core/tracing.js';
import { forRoute } from '../core/route-settings.js';
import type { Lease } from '../store/operation-store.js';
import { downstreamKey } from './downstream-key.js';
import { LeaseKeeper } from './lease-keeper.js';
import type { LeasedContext, LeasedOperation, StepCall, StepOptions } from './leased-route.js';

/** How one run of a leased handler ended. */
export type LeaseRun =
  /** Finished and stored. */
  | { readonly kind: 'finished'; readonly reply: Reply }
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
export async function executeLease<Input, Tx>(given: Idempotency<Tx>, operation: LeasedOperation<Input, Tx>, lease: Lease): Promise<LeaseRun> {
  // A recovery worker applies the route's own settings too.
  const config = forRoute(given, operation);
  const { store, leaseSeconds } = config;
  const bounded = <T>(call: Promise<T>): Promise<T> => withinStoreTimeout(call, config.storeTimeoutMs);
  const keeper = new LeaseKeeper(store, lease, leaseSeconds);
  const done = lease.attempt > 1 ? new Map(await bounded(store.steps(lease))) : new Map<string, unknown>();
  // Whether anything may have reached the outside world: then the operation can only be resumed, never dropped.
  let touched = done.size > 0;

  const call = (name: string): StepCall => ({ idempotencyKey: downstreamKey(lease.identity, name), fencingToken: lease.fencingToken, signal: keeper.signal });
  const record = async <T>(name: string, result: T): Promise<T> => {
    if (!(await bounded(store.checkpoint(lease, name, result, leaseSeconds)))) throw lost();
    keeper.renewed();
    done.set(name, result);
    return result;
  };
  const stepAttributes = (name: string, kind: 'call' | 'local'): SpanAttributes => ({ 'retrysafe.operation': lease.identity.operation, 'retrysafe.step': name, 'retrysafe.step.kind': kind });
  const context: LeasedContext<Input, Tx> = {
    input: lease.input as Input,
    identity: lease.identity,
    attempt: lease.attempt,
    fencingToken: lease.fencingToken,
    signal: keeper.signal,
    async step<T>(name: string, run: (call: StepCall) => Promise<T>, options: StepOptions<T> = {}): Promise<T> {
      keeper.assertHeld();
      if (done.has(name)) return done.get(name) as T;
      return await inSpan(config.tracing, 'retrysafe step', stepAttributes(name, 'call'), () => runStep(name, run, options));
    },
    async local<T>(name: string, work: (tx: Tx) => Promise<T>): Promise<T> {
      keeper.assertHeld();
      if (done.has(name)) return done.get(name) as T;
      return await inSpan(config.tracing, 'retrysafe step', stepAttributes(name, 'local'), () => runLocal(name, work));
    },
  };

  async function runStep<T>(name: string, run: (call: StepCall) => Promise<T>, options: StepOptions<T>): Promise<T> {
    if (lease.attempt > 1 && options.reconcile !== undefined) {
      const found = await options.reconcile(call(name));
      if (found.found) return record(name, found.result);
    }
    touched = true;
    let result: T;
    try {
      result = await run(call(name));
    } catch (error) {
      // The call may have landed before it failed (a dropped connection): ask before giving up.
      const found = options.reconcile === undefined ? undefined : await options.reconcile(call(name)).catch(() => undefined);
      if (found?.found !== true) throw error;
      result = found.result;
    }
    crashPoint('after-step-call');
    const recorded = await record(name, result);
    crashPoint('after-checkpoint');
    return recorded;
  }

  async function runLocal<T>(name: string, work: (tx: Tx) => Promise<T>): Promise<T> {
    const outcome = await bounded(store.checkpointWith(lease, name, leaseSeconds, work));
    if (!outcome.owned) throw lost();
    touched = true;
    keeper.renewed();
    done.set(name, outcome.value);
    return outcome.value;
  }

  try {
    const reply = toReply(await operation.handler(context));
    keeper.stop();
    const stored = isStoredStatus(reply.status, config.policy);
    config.emit({ type: 'finished', identity: lease.identity, mode: 'leased', status: reply.status, stored });
    if (!stored) return (await giveUp(`The handler answered ${reply.status}.`)) ?? { kind: 'not-stored', reply };
    crashPoint('before-finish');
    const finished = await bounded(store.finish(lease, completionOf(reply, config.policy, config.retentionFor(lease.identity))));
    crashPoint('after-finish');
    return finished ? { kind: 'finished', reply } : fenced();
  } catch (error) {
    keeper.stop();
    if (isRetrysafeError(error, 'lease-lost')) return fenced();
    if (isRetrysafeError(error, 'store-unavailable')) throw error;
    return (await giveUp(error instanceof Error ? error.message : String(error))) ?? { kind: 'threw', error };
  }

  /** Drops an untouched operation; otherwise leaves it to resume, or marks it unknown on the last attempt. */
  async function giveUp(reason: string): Promise<LeaseRun | undefined> {
    if (!touched) return (await bounded(store.abandon(lease))) ? undefined : fenced();
    if (lease.attempt >= config.maxAttempts) {
      const why = `Attempt ${lease.attempt} of ${config.maxAttempts} failed after a step may have taken effect: ${reason}`;
      if (!(await bounded(store.markUnknown(lease, why)))) return fenced();
      config.emit({ type: 'unknown', identity: lease.identity, reason: why });
      return { kind: 'unknown', reason: why };
    }
    return (await bounded(store.release(lease, 0))) ? undefined : fenced();
  }

  function fenced(): LeaseRun {
    config.emit({ type: 'fenced', identity: lease.identity, attempt: lease.attempt });
    return { kind: 'lost' };
  }
}

function lost(): RetrysafeError {
  return new RetrysafeError('lease-lost', 'Another worker took the lease over; this one may write nothing more.');
}
