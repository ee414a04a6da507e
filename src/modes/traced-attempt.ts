import type { RetrysafeEvent } from '../core/events.js';
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

/**
 * Runs one attempt in a span named `retrysafe <mode>`, when the application
 * gave a tracer. The span's outcome is derived from the events the attempt
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
  work: (config: C) => Promise<T>,
  origin: 'request' | 'recovery' = 'request',
): Promise<T> {
  const { tracing } = config;
  if (tracing === undefined) return work(config);
  const base = {
    'retrysafe.operation': operation,
    'retrysafe.mode': mode,
    ...(origin === 'recovery' ? { 'retrysafe.recovery': true } : {}),
  };
  return tracing.active(`retrysafe ${mode}`, 'internal', base, async (span) => {
    let outcome: AttemptOutcome = 'unclaimed';
    const details: Record<string, string | number | boolean> = {};
    const emit = (event: RetrysafeEvent): void => {
      outcome = outcomeAfter(event, outcome);
      if (event.type === 'problem') details['retrysafe.problem'] = event.code;
      if (event.type === 'finished')
        Object.assign(details, { 'retrysafe.handler.status': event.status, 'retrysafe.stored': event.stored });
      if (event.type === 'lock-wait') {
        const now = Date.now();
        tracing.start('retrysafe lock-wait', base, now - event.ms).end(now);
      }
      config.emit(event);
    };
    // A thrown error is marked on the span by the tracer.
    try {
      return await work(extend(config, { emit }));
    } finally {
      span.setAttributes(extend(details, { 'retrysafe.outcome': outcome }));
    }
  });
}
