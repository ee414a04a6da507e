import { randomUUID } from 'node:crypto';
import { fillTemplate, UUID_TOKEN } from './body-template.js';
import { CheckError } from './check-error.js';
import { count, milliseconds, type OptionRules, optionsProblem } from '../core/option-rules.js';

/** What to check, and how hard. Only `url` is required. */
export interface CheckOptions {
  /** The endpoint under test. */
  readonly url: string;
  /** Default `POST`. */
  readonly method?: string;
  /**
   * The request body. Every `{{uuid}}` becomes a fresh UUID for each operation
   * the checker starts, so each probe can carry its own business input.
   * Default `{}`.
   */
  readonly body?: string;
  /** A different, valid body for the mismatch probe; `{{uuid}}` is that operation's UUID. Derived from `body` when absent. */
  readonly otherBody?: string;
  /** Sent with every request: the first tenant's credentials. `Content-Type` defaults to `application/json`. */
  readonly headers?: Readonly<Record<string, string>>;
  /** A second tenant's credentials, for the tenant isolation probe. */
  readonly otherHeaders?: Readonly<Record<string, string>>;
  /** Another user of the first tenant, for the other-principal probe: that user's retry must never get the first user's answer. */
  readonly principalHeaders?: Readonly<Record<string, string>>;
  /** A revoked or expired credential of the first user, for the revoked-credential probe: it must never get the stored answer. */
  readonly revokedHeaders?: Readonly<Record<string, string>>;
  /** A URL listing the resources the endpoint creates, read with each tenant's credentials; may hold `{{uuid}}`. */
  readonly countUrl?: string;
  /**
   * A key whose retention has passed (its response pruned, or the key
   * forgotten), sent with `expiredHeaders` (default `headers`), for the
   * expired-key probe: the checker cannot wait out a retention itself.
   */
  readonly expiredKey?: string;
  /** The body the expired key was first sent with, byte for byte. Default `body`, which then may not hold `{{uuid}}`. */
  readonly expiredBody?: string;
  /** The answer the endpoint documents for an expired key. Default 410 (retrysafe's `response-expired`). */
  readonly expiredStatus?: number;
  /** The credentials the expired key was first sent with, when not the first user's (`headers`). */
  readonly expiredHeaders?: Readonly<Record<string, string>>;
  /** Requests sent at once with one key. Default 32, at most 256. */
  readonly concurrency?: number;
  /** Concurrency bursts, each with its own key: a race may open on one run in several. Default 4, at most 16. */
  readonly bursts?: number;
  /** Time-out of each request. Default 10 000 ms. */
  readonly timeoutMs?: number;
  /** Time-out of the whole check. Default 120 000 ms. */
  readonly deadlineMs?: number;
  /** How soon the slow-client probe gives up its first attempt once written. Default 20 ms. */
  readonly abandonAfterMs?: number;
}

/** The options checked and completed. */
export interface CheckPlan {
  readonly url: URL;
  readonly method: string;
  readonly body: string;
  readonly otherBody: string | undefined;
  readonly headers: Readonly<Record<string, string>>;
  readonly otherHeaders: Readonly<Record<string, string>> | undefined;
  readonly principalHeaders: Readonly<Record<string, string>> | undefined;
  readonly revokedHeaders: Readonly<Record<string, string>> | undefined;
  readonly countUrl: string | undefined;
  /** The expired-key probe's key, body, documented status and credentials (undefined: `headers`), when a key was given. */
  readonly expired:
    | {
        readonly key: string;
        readonly body: string;
        readonly status: number;
        readonly headers: Readonly<Record<string, string>> | undefined;
      }
    | undefined;
  readonly concurrency: number;
  readonly bursts: number;
  readonly timeoutMs: number;
  readonly deadlineMs: number;
  readonly abandonAfterMs: number;
}

export const checkDefaults = {
  method: 'POST',
  body: '{}',
  concurrency: 32,
  bursts: 4,
  timeoutMs: 10_000,
  deadlineMs: 120_000,
  abandonAfterMs: 20,
  expiredStatus: 410,
} as const;

export const MAX_CONCURRENCY = 256;
export const MAX_BURSTS = 16;

/** A request answers within 10 minutes, the whole check within an hour. */
export const checkRules = {
  expiredStatus: count(100, 599),
  concurrency: count(1, MAX_CONCURRENCY),
  bursts: count(1, MAX_BURSTS),
  timeoutMs: milliseconds(1, { max: 600_000 }),
  deadlineMs: milliseconds(1, { max: 3_600_000 }),
  abandonAfterMs: milliseconds(0, { max: 600_000 }),
} as const satisfies OptionRules<CheckOptions>;

/** Headers the checker writes itself. */
const RESERVED_HEADERS = new Set(['idempotency-key', 'host', 'content-length', 'transfer-encoding', 'connection']);
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/** Checks and completes the options; throws `CheckError('invalid-options')`. */
export function planCheck(options: CheckOptions): CheckPlan {
  const problem = optionsProblem(checkRules, options);
  if (problem !== undefined) invalid(problem);
  const timeoutMs = options.timeoutMs ?? checkDefaults.timeoutMs;
  const deadlineMs = options.deadlineMs ?? checkDefaults.deadlineMs;
  const abandonAfterMs = options.abandonAfterMs ?? checkDefaults.abandonAfterMs;
  if (deadlineMs < timeoutMs) invalid(`deadlineMs (${deadlineMs}) must be at least timeoutMs (${timeoutMs}).`);
  if (abandonAfterMs >= timeoutMs)
    invalid(`abandonAfterMs (${abandonAfterMs}) must be below timeoutMs (${timeoutMs}).`);
  const method = (options.method ?? checkDefaults.method).toUpperCase();
  if (!TOKEN.test(method)) invalid(`"${method}" is not an HTTP method.`);
  if (options.countUrl !== undefined) httpUrl('count URL', fillTemplate(options.countUrl, randomUUID()));
  return {
    url: httpUrl('URL', options.url),
    method,
    body: options.body ?? checkDefaults.body,
    otherBody: options.otherBody,
    headers: withContentType(headerSet('header', options.headers ?? {})),
    otherHeaders: optionalHeaders('other header', options.otherHeaders),
    principalHeaders: optionalHeaders('principal header', options.principalHeaders),
    revokedHeaders: optionalHeaders('revoked header', options.revokedHeaders),
    countUrl: options.countUrl,
    expired: expiredKey(options),
    concurrency: options.concurrency ?? checkDefaults.concurrency,
    bursts: options.bursts ?? checkDefaults.bursts,
    timeoutMs,
    deadlineMs,
    abandonAfterMs,
  };
}

function expiredKey(options: CheckOptions): CheckPlan['expired'] {
  if (options.expiredKey === undefined) {
    if (
      options.expiredBody !== undefined ||
      options.expiredStatus !== undefined ||
      options.expiredHeaders !== undefined
    )
      invalid('The expired body, status and headers need the expired key they describe.');
    return undefined;
  }
  if (!/^[\x21-\x7e]{1,255}$/.test(options.expiredKey))
    invalid('The expired key must be 1 to 255 visible ASCII characters, as it was sent.');
  const body = options.expiredBody ?? options.body ?? checkDefaults.body;
  if (body.includes(UUID_TOKEN))
    invalid(`The expired key's body holds ${UUID_TOKEN}: give the body it was first sent with as the expired body.`);
  return {
    key: options.expiredKey,
    body,
    status: options.expiredStatus ?? checkDefaults.expiredStatus,
    headers: optionalHeaders('expired header', options.expiredHeaders),
  };
}

function httpUrl(what: string, value: string): URL {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return invalid(`The ${what} "${value}" is not a valid URL.`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    invalid(`The ${what} must be http or https, got ${url.protocol}`);
  return url;
}

function headerSet(what: string, headers: Readonly<Record<string, string>>): Record<string, string> {
  const checked: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    const lower = name.toLowerCase();
    if (!TOKEN.test(name)) invalid(`The ${what} name "${name}" is not a valid header name.`);
    if (RESERVED_HEADERS.has(lower)) invalid(`The ${what} "${name}" is set by the checker itself.`);
    if (/[\r\n\0]/.test(value)) invalid(`The ${what} "${name}" has a line break in its value.`);
    if (checked[lower] !== undefined) invalid(`The ${what} "${name}" is given twice.`);
    checked[lower] = value;
  }
  return checked;
}

function optionalHeaders(
  what: string,
  headers: Readonly<Record<string, string>> | undefined,
): Record<string, string> | undefined {
  return headers === undefined ? undefined : withContentType(headerSet(what, headers));
}

function withContentType(headers: Record<string, string>): Record<string, string> {
  return { 'content-type': 'application/json', ...headers };
}

function invalid(message: string): never {
  throw new CheckError('invalid-options', message);
}
