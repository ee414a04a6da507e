import type { OperationIdentity } from './identity.js';
import type { ProblemCode } from './answer/problems.js';
import type { OperationMode } from './record.js';

/**
 * How an attempt ended, told once for every attempt: `completed` (its answer
 * is stored), `not-stored` (the handler answered a status the policy does not
 * keep: rolled back, given up or left to resume), `threw` (the handler threw,
 * or its statements failed and retrysafe answered), `released` (a leased
 * attempt kept for a later one), `unknown`, `fenced`, `store-unavailable`;
 * and for an attempt whose handler never ran, how it was answered:
 * `replayed`, `conflict`, `mismatch`, `refused`, or `unclaimed` (no key
 * where none is needed, or input the route found invalid).
 */
export type AttemptEnd =
  | 'completed'
  | 'not-stored'
  | 'threw'
  | 'released'
  | 'unknown'
  | 'fenced'
  | 'store-unavailable'
  | 'replayed'
  | 'conflict'
  | 'mismatch'
  | 'refused'
  | 'unclaimed';

/**
 * What happened to a request, for metrics and logs. Events carry the identity
 * so an observer can hash it; they never carry bodies. Observers must not
 * throw and must not block: they run on the request path.
 */
export type RetrysafeEvent =
  /** A first attempt claimed its identity and runs. */
  | { readonly type: 'claimed'; readonly identity: OperationIdentity; readonly mode: OperationMode }
  /** A finished attempt: `stored` is false for answers the policy does not keep. */
  | {
      readonly type: 'finished';
      readonly identity: OperationIdentity;
      readonly mode: OperationMode;
      readonly status: number;
      readonly stored: boolean;
    }
  | { readonly type: 'replayed'; readonly identity: OperationIdentity }
  | { readonly type: 'fingerprint-mismatch'; readonly identity: OperationIdentity }
  /** A duplicate found the first attempt still running (409). */
  | { readonly type: 'conflict'; readonly identity: OperationIdentity }
  /** How long an atomic claim waited behind a concurrent one, when it waited at all. */
  | { readonly type: 'lock-wait'; readonly identity: OperationIdentity; readonly ms: number }
  /** The store failed or was too slow: the request was answered 503, or (transparent mode) its answer could not be stored. */
  | { readonly type: 'store-error'; readonly identity: OperationIdentity | undefined; readonly error: unknown }
  /** A worker that lost its lease tried to write and was refused. */
  | { readonly type: 'fenced'; readonly identity: OperationIdentity; readonly attempt: number }
  /** A retry or a recovery worker took over an expired lease. */
  | {
      readonly type: 'taken-over';
      readonly identity: OperationIdentity;
      readonly attempt: number;
      readonly by: 'retry' | 'recovery';
    }
  /**
   * A leased attempt failed after a step may have reached the outside world:
   * the record is kept, and a retry or a recovery worker resumes it no sooner
   * than `retryInSeconds` from now.
   */
  | {
      readonly type: 'released';
      readonly identity: OperationIdentity;
      readonly attempt: number;
      readonly retryInSeconds: number;
      readonly reason: string;
    }
  | { readonly type: 'unknown'; readonly identity: OperationIdentity; readonly reason: string }
  /**
   * The last event of every attempt, in every mode, a recovery worker's
   * included. `error` is the thrown error's code or class (never its
   * message), or the problem code retrysafe answered with when the
   * handler's statements failed; undefined when nothing failed.
   */
  | {
      readonly type: 'attempt-ended';
      readonly identity: OperationIdentity | undefined;
      readonly operation: string;
      readonly mode: OperationMode;
      readonly outcome: AttemptEnd;
      readonly error: string | undefined;
    }
  /**
   * Every answer that retrysafe decided itself, by problem code, those given
   * before the store (key, authentication, input) included: they have an
   * `operation` but no identity yet.
   */
  | {
      readonly type: 'problem';
      readonly identity: OperationIdentity | undefined;
      readonly operation: string | undefined;
      readonly code: ProblemCode;
    }
  /**
   * A JSON body reached the route without its text (Express without
   * `keepRawBody`, NestJS without `rawBody: true`): a number beyond a
   * double's precision is compared as rounded, and neither its bytes (UTF-8)
   * nor its member names (each once) are checked. Told once per operation.
   */
  | { readonly type: 'raw-body-missing'; readonly identity: undefined; readonly operation: string };

/** One kind of event, by its `type`: `RetrysafeEventOf<'finished'>` has `status` and `stored`. */
export type RetrysafeEventOf<Type extends RetrysafeEvent['type']> = Extract<RetrysafeEvent, { readonly type: Type }>;

export type Observer = (event: RetrysafeEvent) => void;

/** Calls every observer, keeping a faulty one from breaking the request. */
export function notify(observers: readonly Observer[], event: RetrysafeEvent): void {
  for (const observer of observers) {
    try {
      observer(event);
    } catch {
      // An observer's failure is its own; the request goes on.
    }
  }
}
