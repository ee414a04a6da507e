import { isRetrysafeError } from '../core/errors.js';
import type { RetrysafeEvent } from '../core/events.js';
import { identityHash } from '../core/identity.js';
import { extend } from '../core/extend.js';

export type LogLevel = 'info' | 'warn' | 'error';

/** Field values of a log line: scalars only, none of them a tenant, a key or a body. */
export type LogFields = Readonly<Record<string, string | number | boolean>>;

export interface LogEntry {
  readonly level: LogLevel;
  readonly message: string;
  readonly fields: LogFields;
}

/** Problem codes whose events are logged on their own: their `problem` event would say it twice. */
const LOGGED_ELSEWHERE = new Set(['fingerprint-mismatch', 'operation-in-progress', 'store-unavailable']);

/**
 * The log line for an event, or undefined when another line already tells it.
 * The identity appears only as `op`, a keyed hash (see `identityHash`), with
 * the operation name beside it. Free text that could carry request data is
 * left out: the reason of an unknown outcome, the message of a database error.
 */
export function logFields(event: RetrysafeEvent, identitySecret: string | Uint8Array): LogEntry | undefined {
  const base: LogFields =
    event.identity === undefined
      ? { event: event.type }
      : { event: event.type, op: identityHash(event.identity, identitySecret), operation: event.identity.operation };
  const entry = (level: LogLevel, message: string, fields: LogFields = {}): LogEntry => ({
    level,
    message,
    fields: extend(base, fields),
  });
  switch (event.type) {
    case 'claimed':
      return entry('info', 'operation claimed', { mode: event.mode });
    case 'finished':
      return entry('info', 'operation answered', { mode: event.mode, status: event.status, stored: event.stored });
    case 'replayed':
      return entry('info', 'stored response replayed');
    case 'fingerprint-mismatch':
      return entry('warn', 'key reused with a different request');
    case 'conflict':
      return entry('info', 'duplicate while the first attempt runs');
    case 'lock-wait':
      return entry('info', 'waited behind a concurrent attempt', { waitMs: Math.round(event.ms) });
    case 'store-error':
      return entry('error', 'operation store unavailable', errorFields(event.error));
    case 'fenced':
      return entry('warn', 'write refused: the lease was lost', { attempt: event.attempt });
    case 'taken-over':
      return entry('warn', 'expired lease taken over', { attempt: event.attempt, by: event.by });
    case 'released':
      return entry('warn', 'attempt failed after a step: kept for a later attempt', {
        attempt: event.attempt,
        retryInSeconds: event.retryInSeconds,
      });
    case 'unknown':
      return entry('error', 'outcome unknown: needs reconciliation');
    case 'attempt-ended':
      return entry(event.outcome === 'threw' ? 'warn' : 'info', 'attempt ended', {
        operation: event.operation,
        mode: event.mode,
        outcome: event.outcome,
        ...(event.error === undefined ? {} : { errorCode: event.error }),
      });
    case 'problem':
      return LOGGED_ELSEWHERE.has(event.code)
        ? undefined
        : entry('info', 'answered with a problem', { code: event.code });
    case 'raw-body-missing':
      return entry(
        'warn',
        "JSON bodies arrive without their text: numbers beyond a double's precision are compared as rounded",
        { operation: event.operation },
      );
    default:
      return unlogged(event);
  }
}

/** A new kind of event fails to compile here until it is given a line or left out on purpose. */
function unlogged(_event: never): undefined {
  return undefined;
}

/** retrysafe's own code and message, and the driver's error code (SQLSTATE or errno), never its message. */
function errorFields(error: unknown): LogFields {
  const fields: Record<string, string> = {};
  if (isRetrysafeError(error)) {
    fields.errorCode = error.code;
    fields.error = error.message;
  }
  const cause = isRetrysafeError(error) ? error.cause : error;
  if (typeof cause === 'object' && cause !== null && 'code' in cause && typeof cause.code === 'string')
    fields.causeCode = cause.code;
  return fields;
}
