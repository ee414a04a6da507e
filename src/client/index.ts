export { idempotentFetch, type IdempotentFetchInit, type IdempotentResult } from './idempotent-fetch.js';
export { IdempotentFetchError, idempotentFetchErrorCodes, isIdempotentFetchError, type IdempotentFetchErrorCode, type IdempotentFetchErrorDetails } from './fetch-error.js';
export { defaultRetryOptions, type RetryOptions } from './retry-options.js';
export type { RetryEvent, RetryReason } from './retry-event.js';
export { backoffCeiling, backoffDelay, type BackoffOptions } from './backoff.js';
export { parseRetryAfter } from './retry-after.js';
export { classifyStatus, IDEMPOTENT_METHODS, KEYED_METHODS, RETRYABLE_STATUSES, type AnswerSummary, type Verdict } from './retry-policy.js';
export type { ClientSpan, ClientTracing } from './client-tracing.js';
