import type { OperationIdentity } from '../core/identity.js';
import type { HandlerReply } from '../core/answer/reply.js';
import type { RouteDefinition } from '../core/route.js';
import type { RouteSettings } from '../core/route-settings.js';

/** What a step's `run` and `reconcile` receive: the same on every attempt, in every process. */
export interface StepCall {
  /** Derived from the operation identity and the step name: send it as the downstream call's idempotency key. */
  readonly idempotencyKey: string;
  /** The current owner's fencing token: a downstream that supports it can refuse a stale owner. */
  readonly fencingToken: number;
  /** Aborted when this worker loses its lease. */
  readonly signal: AbortSignal;
}

/** What a reconciliation found out about a step that may have run. */
export type Reconciliation<T> =
  | { readonly found: true; readonly result: T }
  /** The downstream has no trace of the call: running it (again, with the same key) is safe. */
  | { readonly found: false };

export interface StepOptions<T> {
  /**
   * Looks the step up downstream by its idempotency key. Called before
   * re-running a step that an earlier attempt may have started, and when `run`
   * fails in a way that leaves its outcome unknown. Throwing means "cannot
   * tell": the operation stays unfinished, and becomes `unknown` after the
   * last attempt.
   */
  // NoInfer: the result type comes from `run`; a look-up that may find nothing must not widen it.
  reconcile?(call: StepCall): Promise<Reconciliation<NoInfer<T>>>;
}

/** What a leased handler works with. It sees no HTTP request, so a recovery worker can run it too. */
export interface LeasedContext<Input, Tx> {
  readonly input: Input;
  readonly identity: OperationIdentity;
  /** 1 on the first attempt, then one more for every take-over. */
  readonly attempt: number;
  readonly fencingToken: number;
  /** Aborted when this worker loses its lease. */
  readonly signal: AbortSignal;
  /**
   * An external call, checkpointed once it returns: a later attempt gets the
   * recorded result without calling `run` again. The result must be JSON.
   */
  step<T>(this: void, name: string, run: (call: StepCall) => Promise<T>, options?: StepOptions<T>): Promise<T>;
  /** Local database writes that commit together with their recovery point, only while the lease is held. */
  local<T>(this: void, name: string, work: (tx: Tx) => Promise<T>): Promise<T>;
}

/** The part of a leased route a recovery worker needs: its name and its handler. */
export interface LeasedOperation<Input, Tx> extends RouteSettings {
  /** `name@version`; part of the identity. */
  readonly operation: string;
  /** Must be deterministic given its input and its steps' results: a recovery worker runs it again. */
  handler(this: void, context: LeasedContext<Input, Tx>): Promise<HandlerReply>;
}

/** A route whose effect leaves the database (a payment provider, an email). Its input must be JSON. */
export interface LeasedRoute<Req, Input, Tx> extends RouteDefinition<Req, Input>, LeasedOperation<Input, Tx> {}
