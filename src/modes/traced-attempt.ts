import type { AttemptEnd, RetrysafeEvent } from '../core/events.js';
import type { OperationIdentity } from '../core/identity.js';
import { errorType } from '../core/tracing.js';
import type { Idempotency } from './idempotency.js';
import type { OperationMode } from '../core/record.js';
import { extend } from '../core/extend.js';

/**
 * What an attempt came to, as the `retrysafe.outcome` span attribute. A
 * bounded set: `refused` is any other answer retrysafe gave on its own
 * behalf (a bad key, no authentication, an expired response…); `unclaimed`
 * is an attempt that claimed nothing and was not refused: a request without
 * a key where none is needed, or input the route found invalid; `released`
 * is a leased attempt that failed after a step and was kept for a later one.
 */
export type AttemptOutcome =
  | 'new'
  | 'resumed'
  | 'replayed'
  | 'conflict'
  | 'mismatch'
  | 'refused'
  | 'store-unavailable'
  | 'unknown'
  | 'fenced'
  | 'released'
  | 'unclaimed';

/** The outcome after `event`; `problem` events only decide when nothing more precise did. */
function outcomeAfter(event: RetrysafeEvent, current: AttemptOutcome): AttemptOutcome {
  switch (event.type) {
    case 'claimed':
      return 'new';
    case 'taken-over':
      return 'resumed';
    case 'replayed':
      return 'replayed';
    case 'conflict':
      // A worker fenced out answers 409 too; being fenced is what happened to it.
      return current === 'fenced' ? current : 'conflict';
    case 'fingerprint-mismatch':
      return 'mismatch';
    case 'store-error':
      return 'store-unavailable';
    case 'unknown':
      return 'unknown';
    case 'fenced':
      return 'fenced';
    case 'released':
      // Failed after a step and kept, to be resumed after its backoff.
      return 'released';
    case 'problem':
      return current === 'unclaimed' ? 'refused' : current;
    case 'finished':
    case 'lock-wait':
    case 'attempt-ended':
    case 'raw-body-missing':
      return current;
    default:
      return unchanged(event, current);
  }
}

/** A new kind of event fails to compile here until its effect on the outcome is decided. */
function unchanged(_event: never, current: AttemptOutcome): AttemptOutcome {
  return current;
}

/** How an attempt's work settled. */
export type Settled = { readonly kind: 'returned' } | { readonly kind: 'threw'; readonly error: unknown };

/** What an attempt's work is given besides its configuration. */
export interface AttemptEnding {
  /**
   * For an attempt that goes on after its work returns (a transparent route
   * runs in the framework's hands): its end is told when the function this
   * returns is called, once, instead of when the work returns.
   */
  handOff(this: void): (settled: Settled) => void;
}

/**
 * Follows one attempt's events and tells its end, `attempt-ended`, exactly
 * once: when its work settles, or when a handed-off attempt says so.
 */
class AttemptTrack implements AttemptEnding {
  outcome: AttemptOutcome = 'unclaimed';
  end: { readonly outcome: AttemptEnd; readonly error: string | undefined } | undefined;
  private identity: OperationIdentity | undefined;
  private answered: { readonly stored: boolean } | undefined;
  private problem: string | undefined;
  private handedOff = false;

  constructor(
    private readonly next: (event: RetrysafeEvent) => void,
    private readonly operation: string,
    private readonly mode: OperationMode,
  ) {}

  readonly emit = (event: RetrysafeEvent): void => {
    this.outcome = outcomeAfter(event, this.outcome);
    this.identity ??= event.identity;
    if (event.type === 'finished') this.answered = { stored: event.stored };
    if (event.type === 'problem') this.problem = event.code;
    this.next(event);
  };

  readonly handOff = (): ((settled: Settled) => void) => {
    this.handedOff = true;
    return (settled) => this.tell(settled);
  };

  /** The work settled: the attempt ends here unless it was handed off and goes on. */
  settle(settled: Settled): void {
    if (!this.handedOff || settled.kind === 'threw') this.tell(settled);
  }

  private tell(settled: Settled): void {
    if (this.end !== undefined) return;
    this.end = endOf(this.outcome, this.answered, this.problem, settled);
    const { identity, operation, mode } = this;
    this.next({ type: 'attempt-ended', identity, operation, mode, outcome: this.end.outcome, error: this.end.error });
  }
}

/** How an attempt ended, from what it came to and how its work settled. */
function endOf(
  outcome: AttemptOutcome,
  answered: { readonly stored: boolean } | undefined,
  problem: string | undefined,
  settled: Settled,
): { readonly outcome: AttemptEnd; readonly error: string | undefined } {
  if (settled.kind === 'threw') return { outcome: 'threw', error: errorType(settled.error) };
  if (outcome !== 'new' && outcome !== 'resumed') return { outcome, error: undefined };
  if (answered !== undefined) return { outcome: answered.stored ? 'completed' : 'not-stored', error: undefined };
  // Claimed, and answered by retrysafe instead of the handler: its statements failed (a statement timeout, an aborted transaction).
  return { outcome: 'threw', error: problem };
}

/**
 * Runs one attempt, the one place every mode and the recovery worker start
 * theirs: whatever way it ends, it ends with one `attempt-ended` event. When
 * the application gave a tracer, the attempt runs in a span named
 * `retrysafe <mode>`, whose outcome is derived from the events the attempt
 * emits; store calls and steps become its children through the tracer's
 * active context, and a lock wait becomes a child span dated back from its
 * event. `work` gets the configuration whose `emit` also feeds the span.
 * `origin` says who runs the attempt: a recovery worker's is marked
 * `retrysafe.recovery`.
 */
export function traceAttempt<C extends Idempotency<unknown, unknown>, T>(
  config: C,
  operation: string,
  mode: OperationMode,
  work: (config: C, ending: AttemptEnding) => Promise<T>,
  origin: 'request' | 'recovery' = 'request',
): Promise<T> {
  const { tracing } = config;
  if (tracing === undefined) return tracked(config, new AttemptTrack(config.emit, operation, mode), work);
  const base = {
    'retrysafe.operation': operation,
    'retrysafe.mode': mode,
    ...(origin === 'recovery' ? { 'retrysafe.recovery': true } : {}),
  };
  return tracing.active(`retrysafe ${mode}`, 'internal', base, async (span) => {
    const details: Record<string, string | number | boolean> = {};
    const emit = (event: RetrysafeEvent): void => {
      if (event.type === 'problem') details['retrysafe.problem'] = event.code;
      if (event.type === 'finished')
        Object.assign(details, { 'retrysafe.handler.status': event.status, 'retrysafe.stored': event.stored });
      if (event.type === 'lock-wait') {
        const now = Date.now();
        tracing.start('retrysafe lock-wait', base, now - event.ms).end(now);
      }
      config.emit(event);
    };
    const track = new AttemptTrack(emit, operation, mode);
    try {
      return await tracked(config, track, work);
    } finally {
      const { end } = track;
      span.setAttributes(
        extend(details, {
          'retrysafe.outcome': track.outcome,
          ...(end === undefined ? {} : { 'retrysafe.end': end.outcome }),
        }),
      );
      // The tracer marks a thrown error too; this also marks a failure retrysafe answered for.
      if (end?.outcome === 'threw') span.fail({ code: end.error });
    }
  });
}

/** Runs `work` with `track` told every event and how the work settled. Chained, not awaited: one promise a request. */
function tracked<C extends Idempotency<unknown, unknown>, T>(
  config: C,
  track: AttemptTrack,
  work: (config: C, ending: AttemptEnding) => Promise<T>,
): Promise<T> {
  let running: Promise<T>;
  try {
    running = work(extend(config, { emit: track.emit }), track);
  } catch (error) {
    // A work that threw before it returned a promise settles as if it had rejected; its error passed on as thrown.
    // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors
    running = Promise.reject(error);
  }
  return running.then(
    (value) => {
      track.settle({ kind: 'returned' });
      return value;
    },
    (error: unknown) => {
      track.settle({ kind: 'threw', error });
      throw error;
    },
  );
}
