/**
 * Every answer retrysafe gives on its own behalf, as RFC 9457 problem details.
 * `docs/errors.md` lists the same table; a test keeps the two equal.
 */
export const problemCatalogue = {
  'idempotency-key-missing': { status: 400, title: 'Idempotency-Key header required' },
  'idempotency-key-invalid': { status: 400, title: 'Idempotency-Key header is malformed' },
  'request-body-invalid': { status: 400, title: 'Request body could not be read' },
  'request-body-too-deep': { status: 400, title: 'Request body is nested too deeply' },
  'request-body-number-unsafe': { status: 400, title: 'Request body holds a number that cannot be compared exactly' },
  'request-body-not-utf8': { status: 400, title: 'Request body is not UTF-8' },
  'request-body-duplicate-member': { status: 400, title: 'Request body names an object member twice' },
  'webhook-payload-invalid': { status: 400, title: 'Webhook payload could not be read' },
  unauthenticated: { status: 401, title: 'Caller could not be identified' },
  'webhook-signature-invalid': { status: 401, title: 'Webhook signature missing or invalid' },
  'webhook-timestamp-invalid': { status: 401, title: 'Webhook timestamp outside the tolerance' },
  forbidden: { status: 403, title: 'Caller may not perform this operation' },
  'key-of-another-principal': { status: 403, title: 'Idempotency-Key belongs to another user' },
  'operation-in-progress': { status: 409, title: 'An earlier attempt with this key is still running' },
  'outcome-unknown': { status: 409, title: 'The outcome of the earlier attempt is being reconciled' },
  'response-expired': { status: 410, title: 'The stored response for this key has expired' },
  'response-not-stored': { status: 410, title: 'The response for this key was too large to store' },
  'fingerprint-mismatch': { status: 422, title: 'Idempotency-Key reused with a different request' },
  'transaction-aborted': { status: 500, title: 'The operation failed a statement of its own and went on' },
  'route-failed': { status: 500, title: 'The route failed after it may have had effects' },
  'tenant-invalid': { status: 500, title: 'The route named a tenant that cannot be stored' },
  'statement-timeout': { status: 503, title: 'A statement of the operation ran out of time' },
  'store-unavailable': { status: 503, title: 'Idempotency store unavailable' },
} as const satisfies Record<string, { readonly status: number; readonly title: string }>;

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
  const { status, title } = problemCatalogue[p.code];
  return {
    type: `${base}${p.code}`,
    title,
    status,
    detail: p.detail,
    ...(p.resource === undefined ? {} : { resource: p.resource }),
  };
}
