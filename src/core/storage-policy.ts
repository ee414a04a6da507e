import { RetrysafeError } from './errors.js';
import type { HeaderValue, Reply } from './answer/reply.js';
import type { Completion } from './completion.js';
import type { Retention } from './retention.js';
import { extend } from './extend.js';

/** What retrysafe keeps of an operation's answer. */
export interface StoragePolicy {
  /** Response headers stored and replayed with the body. Default: Content-Type, Location, ETag, Last-Modified. */
  readonly storedHeaders: readonly string[];
  /**
   * Statuses that describe the moment rather than the operation, never stored,
   * so a retry runs again. Every 5xx is treated so too. Default: 408, 409, 425, 429.
   * A transparent route's are failures after its effects instead: its
   * `onFailure` says what is kept.
   */
  readonly transientStatuses: readonly number[];
  /**
   * Largest body stored, in bytes. A larger answer is still sent, and its
   * status and headers are kept, but retries get `response-not-stored`.
   * Default 1 MiB.
   */
  readonly maxStoredBodyBytes: number;
}

/** Headers that carry credentials or session state: never stored, whatever the policy says. */
const NEVER_STORED = new Set(['set-cookie', 'authorization', 'proxy-authorization', 'cookie', 'www-authenticate']);

export const defaultPolicy: StoragePolicy = {
  storedHeaders: ['content-type', 'location', 'etag', 'last-modified'],
  transientStatuses: [408, 409, 425, 429],
  maxStoredBodyBytes: 1024 * 1024,
};

export function resolvePolicy(overrides: Partial<StoragePolicy> = {}): StoragePolicy {
  const storedHeaders = (overrides.storedHeaders ?? defaultPolicy.storedHeaders).map((h) => h.toLowerCase());
  const forbidden = storedHeaders.filter((h) => NEVER_STORED.has(h));
  if (forbidden.length > 0) {
    throw new RetrysafeError('misuse', `These headers can never be stored: ${forbidden.join(', ')}.`);
  }
  return {
    storedHeaders,
    transientStatuses: overrides.transientStatuses ?? defaultPolicy.transientStatuses,
    maxStoredBodyBytes: overrides.maxStoredBodyBytes ?? defaultPolicy.maxStoredBodyBytes,
  };
}

/** Whether an answer with this status is stored as the operation's completion, to replay. */
export function isStoredStatus(status: number, policy: StoragePolicy): boolean {
  return status < 500 && !policy.transientStatuses.includes(status);
}

/** The part of a reply that is stored: status, body bytes and the allowed headers. */
export function storedPart(reply: Reply, policy: StoragePolicy): Reply {
  const headers: Record<string, HeaderValue> = {};
  for (const name of policy.storedHeaders) {
    const value = reply.headers[name];
    if (value !== undefined) headers[name] = value;
  }
  return { status: reply.status, headers, body: reply.body };
}

/**
 * What is written for a stored answer: `failed` for a refusal (4xx, no
 * effect), `completed` otherwise; the allowed headers; the body unless it is
 * over the size limit.
 */
export function completionOf(reply: Reply, policy: StoragePolicy, retention: Retention): Completion {
  const stored = storedPart(reply, policy);
  const omitted = stored.body.byteLength > policy.maxStoredBodyBytes;
  return {
    state: reply.status < 400 ? 'completed' : 'failed',
    reply: omitted ? extend(stored, { body: new Uint8Array() }) : stored,
    retention,
    omitted,
  };
}
