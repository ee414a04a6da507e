import { RetrysafeError } from '../core/errors.js';
import type { Observer, RetrysafeEvent } from '../core/events.js';
import { logFields } from './log-fields.js';

/** The members of a pino (or pino-like) logger that retrysafe calls. */
export interface LoggerLike {
  info(fields: object, message: string): void;
  warn(fields: object, message: string): void;
  error(fields: object, message: string): void;
}

export interface LogObserverOptions {
  /** Keys the hash that stands in for tenant and key in every line. Keep it secret and stable, to correlate lines over time. */
  readonly identitySecret: string | Uint8Array;
}

/** An observer that writes one structured line per event, without raw keys, tenants or bodies. */
export function logObserver(logger: LoggerLike, options: LogObserverOptions): Observer {
  const secret = options.identitySecret;
  if (secret.length === 0) throw new RetrysafeError('misuse', 'logObserver needs a non-empty identitySecret.');
  return function logEvent(event: RetrysafeEvent): void {
    const entry = logFields(event, secret);
    if (entry !== undefined) logger[entry.level](entry.fields, entry.message);
  };
}
