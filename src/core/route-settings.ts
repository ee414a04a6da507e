import type { OperationIdentity } from './identity.js';
import { RetrysafeError } from './errors.js';
import { defaultRetention, type Retention } from './retention.js';
import { extend } from './extend.js';
import { checkOptions, milliseconds, type OptionRules, seconds, STORED_MAX_SECONDS } from './option-rules.js';

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

/** A duplicate's wait for a running attempt, in milliseconds; 0 for none. The configuration's and a route's. */
export const lockTimeoutRule = milliseconds(0);

/** A retention is kept in the record's expiry columns, not timed in the process. */
export const retentionRules = {
  responseSeconds: seconds(0.001, STORED_MAX_SECONDS),
  tombstoneSeconds: seconds(0.001, STORED_MAX_SECONDS),
} as const satisfies OptionRules<Retention>;

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
 * A retention the record's expiry columns can hold. Checked when it is set,
 * and on what a retention function answers, so that a bad value fails loudly
 * rather than as a store error that a retry would meet again.
 */
export function checkRetention(retention: Retention): Retention {
  checkOptions(retentionRules, retention, 'retention.', ['responseSeconds', 'tombstoneSeconds']);
  return retention;
}
