import { parseRetryAfter } from './retry-after.js';

/** Methods that get an `Idempotency-Key` by default: their retries are safe only through one. */
export const KEYED_METHODS: ReadonlySet<string> = new Set(['POST', 'PATCH']);

/** Methods that HTTP defines as idempotent (RFC 9110 §9.2.2): safe to repeat without a key. */
export const IDEMPOTENT_METHODS: ReadonlySet<string> = new Set(['GET', 'HEAD', 'PUT', 'DELETE', 'OPTIONS']);

/**
 * Statuses that describe the moment, not the operation: 425 Too Early, 429 Too
 * Many Requests, and the gateway and availability errors 502, 503, 504. A 409
 * is retried only when it says a duplicate is in flight (see `classifyStatus`).
 * 500 is not here: it is an unexplained failure, a retry tends to meet the same
 * bug, and servers that store outcomes (Stripe) replay the 500 anyway. Servers
 * that mean "try again" answer 503.
 */
export const RETRYABLE_STATUSES: ReadonlySet<number> = new Set([425, 429, 502, 503, 504]);

/** The problem `type` suffix a server uses for "an earlier attempt with this key is still running". */
export const IN_PROGRESS_TYPE_SUFFIX = '/operation-in-progress';

/** Whether an answer ends the call, or a later attempt may get a better one. */
export type Verdict =
  | { readonly retry: false }
  /** `retryAfterMs` is what the server asked for, when it did. */
  | { readonly retry: true; readonly retryAfterMs: number | undefined };

/** What the classification reads from an answer. */
export interface AnswerSummary {
  readonly status: number;
  readonly retryAfter: string | null;
  /** The problem+json `type`, when the body is one. */
  readonly problemType: string | undefined;
}

/**
 * Classifies an answer. A 409 is a duplicate still in flight only when it says
 * so, with `Retry-After` or an `…/operation-in-progress` problem type; any other
 * 409 is a business conflict and final, as are every other 4xx and 500.
 */
export function classifyStatus(answer: AnswerSummary, now: number = Date.now()): Verdict {
  const retryAfterMs = parseRetryAfter(answer.retryAfter, now);
  if (RETRYABLE_STATUSES.has(answer.status)) return { retry: true, retryAfterMs };
  if (answer.status !== 409) return { retry: false };
  if (retryAfterMs !== undefined || answer.problemType?.endsWith(IN_PROGRESS_TYPE_SUFFIX) === true) {
    return { retry: true, retryAfterMs };
  }
  return { retry: false };
}

/**
 * Classifies a response. Only a 409 without `Retry-After` has its body read,
 * from a clone, so the response handed back to the caller is still unread.
 */
export async function classifyResponse(response: Response, now: number = Date.now()): Promise<Verdict> {
  const retryAfter = response.headers.get('retry-after');
  const needsBody = response.status === 409 && parseRetryAfter(retryAfter, now) === undefined;
  const problemType = needsBody ? await readProblemType(response) : undefined;
  return classifyStatus({ status: response.status, retryAfter, problemType }, now);
}

async function readProblemType(response: Response): Promise<string | undefined> {
  if (!/^application\/problem\+json\b/i.test(response.headers.get('content-type') ?? '')) return undefined;
  // A failure to read the body propagates: it is a failed attempt, not a final answer.
  const text = await response.clone().text();
  let document: unknown;
  try {
    document = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof document !== 'object' || document === null || !('type' in document)) return undefined;
  return typeof document.type === 'string' ? document.type : undefined;
}
