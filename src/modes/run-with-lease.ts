import { isRetrysafeError } from '../core/errors.js';
import { bounded, ERROR_CHAIN_MAX_CHARS, errorChain } from '../core/error-chain.js';
import type { Idempotency } from './idempotency.js';
import { completionOf, isStoredStatus } from '../core/storage-policy.js';
import { type Reply, toReply } from '../core/answer/reply.js';
import { crashPoint } from '../core/crash-point.js';
import { forRoute } from './route-attempt.js';
import type { Failure, Lease, LeasedWrites, LeaseRenewal, StepProgress } from '../store/lease-store.js';
import { LeaseKeeper } from './lease-keeper.js';
import { type HandlerEnd, LeaseSteps } from './lease-steps.js';
import { retryDelaySeconds } from './retry-delay.js';
import type { LeasedOperation } from './leased-route.js';

/** What a run under a held lease uses of the store: its writes and the lease keeper's renewals. */
export type LeasedRunStore<Tx> = LeasedWrites<Tx> & LeaseRenewal;

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
 * and for a recovery worker, in three phases: read the steps earlier attempts
 * got to, run the handler over them (`LeaseSteps`), then write what its end
 * means for the operation.
 */
export async function runWithLease<Input, Tx>(
  given: Idempotency<Tx, LeasedRunStore<Tx>>,
  operation: LeasedOperation<Input, Tx>,
  lease: Lease,
): Promise<LeaseRun> {
  // A recovery worker applies the route's own settings too.
  const config = forRoute(given, operation);
  const earlier = lease.attempt > 1 ? await config.store.steps(lease) : new Map<string, StepProgress>();
  const run: Run<Tx> = { config, lease, began: config.clock.monotonic() };
  return conclude(run, await runHandler(run, operation, earlier));
}

/** One run's fixed facts, which every phase after the handler reads. */
interface Run<Tx> {
  readonly config: Idempotency<Tx, LeasedRunStore<Tx>>;
  readonly lease: Lease;
  readonly began: number;
}

/** The handler, with its lease renewed while it runs; a store failure goes on to the caller. */
async function runHandler<Input, Tx>(
  { config, lease }: Run<Tx>,
  operation: LeasedOperation<Input, Tx>,
  earlier: ReadonlyMap<string, StepProgress>,
): Promise<HandlerEnd> {
  // Started once nothing can throw before the try below stops it.
  const keeper = new LeaseKeeper(config.store, lease, config.clock);
  const steps = new LeaseSteps(config, lease, keeper, earlier);
  try {
    return steps.ended({ kind: 'answered', reply: toReply(await operation.handler(steps.context<Input>())) });
  } catch (error) {
    if (isRetrysafeError(error, 'store-unavailable')) throw error;
    return steps.ended({ error });
  } finally {
    keeper.stop();
  }
}

/** Writes what the handler's end means: the completion, a release, `unknown`, or nothing when the lease was lost. */
async function conclude<Tx>(run: Run<Tx>, end: HandlerEnd): Promise<LeaseRun> {
  switch (end.kind) {
    case 'lost':
      return fenced(run);
    case 'changed':
      return stop(run, end.reason);
    case 'threw':
      return (
        (await giveUp(run, end, errorChain(end.error), end.counted)) ?? {
          kind: 'threw',
          error: end.error,
        }
      );
    case 'answered':
      return complete(run, end);
  }
}

/** Stores the handler's answer when the policy keeps it; an answer it does not keep is a failed attempt. */
async function complete<Tx>(run: Run<Tx>, end: HandlerEnd & { readonly kind: 'answered' }): Promise<LeaseRun> {
  const { config, lease } = run;
  const { reply } = end;
  const stored = isStoredStatus(reply.status, config.policy);
  config.emit({ type: 'finished', identity: lease.identity, mode: 'leased', status: reply.status, stored });
  if (!stored)
    return (await giveUp(run, end, `The handler answered ${reply.status}.`, true)) ?? { kind: 'not-stored', reply };
  crashPoint('before-complete');
  const completed = await config.store.completeLease(
    lease,
    completionOf(reply, config.policy, config.retentionFor(lease.identity)),
  );
  crashPoint('after-complete');
  return completed ? { kind: 'completed', reply } : fenced(run);
}

/**
 * Only a first attempt that never started a step may be dropped: nothing of
 * it can have reached the outside world. Any other failure keeps the
 * record: released for a later attempt after a backoff, or `unknown` once
 * the failures that count or the time since the claim run out.
 */
async function giveUp<Tx>(
  run: Run<Tx>,
  { touched }: HandlerEnd,
  reason: string,
  counted: boolean,
): Promise<LeaseRun | undefined> {
  const { config, lease } = run;
  if (lease.attempt === 1 && !touched) return (await config.store.abandon(lease)) ? undefined : fenced(run);
  // The attempt that gives up is a failure like the others: counted, and its error kept.
  const failure = { counted, error: reason };
  const failures = lease.failures + (counted ? 1 : 0);
  if (failures >= config.maxAttempts) {
    return stop(
      run,
      `${failures} of ${config.maxAttempts} attempts failed after a step may have taken effect; the last (attempt ${lease.attempt}): ${reason}`,
      failure,
    );
  }
  if (lease.ageSeconds + (config.clock.monotonic() - run.began) / 1000 >= config.giveUpAfterSeconds) {
    return stop(
      run,
      `Attempt ${lease.attempt} failed past the give-up horizon of ${config.giveUpAfterSeconds} s after a step may have taken effect: ${reason}`,
      failure,
    );
  }
  const delaySeconds = retryDelaySeconds(lease.attempt, config.retryDelay);
  if (!(await config.store.release(lease, { delaySeconds, ...failure }))) return fenced(run);
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
async function stop<Tx>(run: Run<Tx>, reason: string, failure?: Failure): Promise<LeaseRun> {
  const { config, lease } = run;
  // The stored reason is at most 4096 bytes; an error chain can be longer.
  const why = bounded(reason, ERROR_CHAIN_MAX_CHARS);
  if (!(await config.store.markUnknown(lease, why, failure))) return fenced(run);
  config.emit({ type: 'unknown', identity: lease.identity, reason: why });
  return { kind: 'unknown', reason: why };
}

function fenced<Tx>({ config, lease }: Run<Tx>): LeaseRun {
  config.emit({ type: 'fenced', identity: lease.identity, attempt: lease.attempt });
  return { kind: 'lost' };
}
