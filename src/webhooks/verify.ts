import { sameBytes } from '../core/same-bytes.js';
import { webhookDigest, webhookKey } from './sign.js';
import { checkOptions, type OptionRules, seconds, STORED_MAX_SECONDS } from '../core/option-rules.js';

/** Request headers: a Fetch `Headers`, or a Node-style record with lower-case names (Node, Fastify, Express). */
export type WebhookHeaders =
  { get(name: string): string | null } | Readonly<Record<string, string | readonly string[] | undefined>>;

export interface VerifyOptions {
  /** `whsec_<base64>` secrets; a signature made with any of them is accepted, which is how a rotation works. */
  readonly secrets: string | readonly string[];
  /** How far `webhook-timestamp` may be from now, either way. Default 300 s. */
  readonly toleranceSeconds?: number;
  /** Now, in unix seconds. Default: the clock. */
  readonly nowSeconds?: number;
}

/** The last second of year 9999, the latest `nowSeconds` a clock stands for. */
const LAST_UNIX_SECOND = 253_402_300_799;

export const verifyRules = {
  toleranceSeconds: seconds(1, STORED_MAX_SECONDS),
  nowSeconds: seconds(0, LAST_UNIX_SECOND),
} as const satisfies OptionRules<VerifyOptions>;

/** Why a delivery did not verify. */
export type VerificationFailure =
  'missing-header' | 'invalid-timestamp' | 'outside-tolerance' | 'no-matching-signature';

export type WebhookVerification =
  | { readonly ok: true; readonly id: string; readonly timestamp: number }
  | { readonly ok: false; readonly reason: VerificationFailure };

/**
 * Verifies a delivery per Standard Webhooks over its raw body bytes: the body
 * must be exactly what was signed, so verify before any parsing. Signatures
 * are compared in constant time; a timestamp outside the tolerance is
 * refused, so a captured delivery cannot be replayed later.
 */
export function verifyWebhook(
  options: VerifyOptions,
  headers: WebhookHeaders,
  rawBody: Uint8Array | string,
): WebhookVerification {
  checkOptions(verifyRules, options);
  const id = header(headers, 'webhook-id');
  const stamp = header(headers, 'webhook-timestamp');
  const signatures = header(headers, 'webhook-signature');
  if (id === undefined || id === '' || stamp === undefined || signatures === undefined)
    return { ok: false, reason: 'missing-header' };
  if (!/^\d{1,12}$/.test(stamp)) return { ok: false, reason: 'invalid-timestamp' };
  const timestamp = Number(stamp);
  const now = options.nowSeconds ?? Math.floor(Date.now() / 1000);
  if (Math.abs(now - timestamp) > (options.toleranceSeconds ?? 300)) return { ok: false, reason: 'outside-tolerance' };
  const secrets = typeof options.secrets === 'string' ? [options.secrets] : options.secrets;
  const expected = secrets.map((secret) => webhookDigest(webhookKey(secret), id, timestamp, rawBody));
  const given = signatures
    .split(' ')
    .filter((signature) => signature.startsWith('v1,'))
    .map((signature) => Buffer.from(signature.slice(3), 'base64'));
  const matches = given.some((signature) => expected.some((digest) => sameBytes(signature, digest)));
  return matches ? { ok: true, id, timestamp } : { ok: false, reason: 'no-matching-signature' };
}

function header(headers: WebhookHeaders, name: string): string | undefined {
  if (isFetchHeaders(headers)) return headers.get(name) ?? undefined;
  const value = headers[name];
  // A repeated header: Standard Webhooks allows several signatures in one; take them all.
  return typeof value === 'string' || value === undefined ? value : value.join(' ');
}

function isFetchHeaders(headers: WebhookHeaders): headers is { get(name: string): string | null } {
  return typeof headers.get === 'function';
}
