/**
 * Every answer retrysafe gives on its own behalf, as RFC 9457 problem details.
 * `docs/errors.md` lists the same table; a test keeps the two equal.
 */
export const problemCatalogue = {
  'idempotency-key-missing': { status: 400, title: 'Idempotency-Key header required', applied: 'no', retry: 'new-key' },
  'idempotency-key-invalid': {
    status: 400,
    title: 'Idempotency-Key header is malformed',
    applied: 'no',
    retry: 'new-key',
  },
  'request-body-invalid': { status: 400, title: 'Request body could not be read', applied: 'no', retry: 'new-key' },
  'request-body-too-deep': { status: 400, title: 'Request body is nested too deeply', applied: 'no', retry: 'new-key' },
  'request-body-number-unsafe': {
    status: 400,
    title: 'Request body holds a number that cannot be compared exactly',
    applied: 'no',
    retry: 'new-key',
  },
  'request-body-not-utf8': { status: 400, title: 'Request body is not UTF-8', applied: 'no', retry: 'new-key' },
  'request-body-duplicate-member': {
    status: 400,
    title: 'Request body names an object member twice',
    applied: 'no',
    retry: 'new-key',
  },
  'webhook-payload-invalid': { status: 400, title: 'Webhook payload could not be read', applied: 'no', retry: 'none' },
  unauthenticated: { status: 401, title: 'Caller could not be identified', applied: 'unknown', retry: 'same-key' },
  'webhook-signature-invalid': {
    status: 401,
    title: 'Webhook signature missing or invalid',
    applied: 'no',
    retry: 'none',
  },
  'webhook-timestamp-invalid': {
    status: 401,
    title: 'Webhook timestamp outside the tolerance',
    applied: 'no',
    retry: 'none',
  },
  forbidden: { status: 403, title: 'Caller may not perform this operation', applied: 'unknown', retry: 'none' },
  'key-of-another-principal': {
    status: 403,
    title: 'Idempotency-Key belongs to another user',
    applied: 'no',
    retry: 'new-key',
  },
  'operation-in-progress': {
    status: 409,
    title: 'An earlier attempt with this key is still running',
    applied: 'unknown',
    retry: 'same-key',
  },
  'outcome-unknown': {
    status: 409,
    title: 'The outcome of the earlier attempt is being reconciled',
    applied: 'unknown',
    retry: 'same-key',
  },
  'response-expired': {
    status: 410,
    title: 'The stored response for this key has expired',
    applied: 'yes',
    retry: 'none',
  },
  'response-not-stored': {
    status: 410,
    title: 'The response for this key was too large to store',
    applied: 'yes',
    retry: 'none',
  },
  'fingerprint-mismatch': {
    status: 422,
    title: 'Idempotency-Key reused with a different request',
    applied: 'no',
    retry: 'new-key',
  },
  'transaction-aborted': {
    status: 500,
    title: 'The operation failed a statement of its own and went on',
    applied: 'no',
    retry: 'new-key',
  },
  'route-failed': {
    status: 500,
    title: 'The route failed after it may have had effects',
    applied: 'unknown',
    retry: 'none',
  },
  'tenant-invalid': {
    status: 500,
    title: 'The route named a tenant that cannot be stored',
    applied: 'no',
    retry: 'new-key',
  },
  'statement-timeout': {
    status: 503,
    title: 'A statement of the operation ran out of time',
    applied: 'no',
    retry: 'same-key',
  },
  'store-unavailable': { status: 503, title: 'Idempotency store unavailable', applied: 'unknown', retry: 'same-key' },
} as const satisfies Record<
  string,
  { readonly status: number; readonly title: string; readonly applied: Applied; readonly retry: RetryGuidance }
>;

/**
 * Whether the request's operation took effect, as far as retrysafe can tell: `no`, nothing of it was applied;
 * `yes`, it was applied by the key's first request; `unknown`, it may have been.
 */
export type Applied = 'no' | 'yes' | 'unknown';

/**
 * What the client may do next: `same-key`, send the same request again with the same key (after `Retry-After`
 * when there is one); `new-key`, nothing was applied, so the request, once fixed, is safe under a new key;
 * `none`, send it again under no key: a new key could apply it twice, and the same key will not change the answer.
 */
export type RetryGuidance = 'same-key' | 'new-key' | 'none';

export type ProblemCode = keyof typeof problemCatalogue;

/** The default base of problem `type` URIs; a code is appended. */
export const defaultProblemBase = 'https://retrysafe.dev/problems/';

/** A problem decided by retrysafe, before it becomes a response. */
export interface Problem {
  readonly code: ProblemCode;
  readonly detail: string;
  /** Seconds, for `Retry-After`. */
  readonly retryAfter?: number;
  /** A resource the problem points to, sent as `Location` and as a member. */
  readonly resource?: string;
}

export function problem(code: ProblemCode, detail: string, extra: Omit<Problem, 'code' | 'detail'> = {}): Problem {
  return { code, detail, ...extra };
}

/** The problem+json document for `problem`, as an object. */
export function problemDocument(p: Problem, base: string = defaultProblemBase): Record<string, unknown> {
  const { status, title, applied, retry } = problemCatalogue[p.code];
  return {
    type: `${base}${p.code}`,
    title,
    status,
    detail: p.detail,
    applied,
    retry,
    ...(p.resource === undefined ? {} : { resource: p.resource }),
  };
}
