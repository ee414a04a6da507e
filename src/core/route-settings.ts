import type { OperationIdentity } from './identity.js';
import { RetrysafeError } from './errors.js';
import { defaultRetention, type Retention } from './retention.js';
import { extend } from './extend.js';

/**
 * How long an operation's answer and tombstone are kept: fixed, or decided
 * per operation (by tenant, say) when the operation is stored.
 */
export type RetentionSetting = Partial<Retention> | ((identity: OperationIdentity) => Partial<Retention>);

/** What a route may set for itself over the configuration's defaults; a recovery worker applies the same. */
export interface RouteSettings {
  /**
   * The URL of this route's documented idempotency policy, sent as
   * `Link: <url>; rel="describedby"` on retrysafe's own 400, 409 and 422
   * answers, as the IETF Idempotency-Key draft recommends. Default: the
   * configuration's `describedBy`.
   */
  readonly describedBy?: string;
  /** This route's retention, over the configuration's. A function decides per operation, by tenant for example. */
  readonly retention?: RetentionSetting;
}

/** A URL that fits between `<` and `>` of a Link header: no spaces, controls or angle brackets. */
export function assertDescribedBy(url: string | undefined): void {
  if (url !== undefined && !/^[\x21-\x7e]+$/.test(url.replace(/[<>]/g, ' '))) {
    throw new RetrysafeError(
      'misuse',
      `describedBy must be a URL without spaces or angle brackets, got ${JSON.stringify(url)}.`,
    );
  }
}

/** A duplicate's wait: a finite number of milliseconds, 0 for none. */
export function assertWait(name: string, ms: number): number {
  if (!Number.isFinite(ms) || ms < 0)
    throw new RetrysafeError('misuse', `${name} must be a number of milliseconds from 0 up, got ${ms}.`);
  return ms;
}

/** A setting that must be a positive number. */
export function positive(name: string, value: number): number {
  if (!Number.isFinite(value) || value <= 0)
    throw new RetrysafeError('misuse', `${name} must be a positive number, got ${value}.`);
  return value;
}

/** The retention of one operation under `setting`, over `base`. */
export function resolveRetention(
  setting: RetentionSetting | undefined,
  identity: OperationIdentity,
  base: Retention = defaultRetention,
): Retention {
  if (setting === undefined) return base;
  return checkRetention(extend(base, typeof setting === 'function' ? setting(identity) : setting));
}

/**
 * A retention the record's expiry columns can hold: a finite, positive number
 * of seconds each. Checked when it is set, and on what a retention function
 * answers, so that a bad value fails loudly rather than as a store error that
 * a retry would meet again.
 */
export function checkRetention(retention: Retention): Retention {
  for (const name of ['responseSeconds', 'tombstoneSeconds'] as const) {
    const seconds: unknown = retention[name];
    if (typeof seconds !== 'number' || !Number.isFinite(seconds) || seconds <= 0) {
      throw new RetrysafeError(
        'misuse',
        `retention.${name} must be a positive, finite number of seconds, got ${String(seconds)}.`,
      );
    }
  }
  return retention;
}
