export { idempotentFetch, type IdempotentFetchInit, type IdempotentResult } from './idempotent-fetch.js';
export {
  IdempotentFetchError,
  idempotentFetchErrorCodes,
  isIdempotentFetchError,
  type IdempotentFetchErrorCode,
  type IdempotentFetchErrorDetails,
} from './fetch-error.js';
export { defaultRetryOptions, type RetryOptions } from './retry-options.js';
export { type Clock, systemClock, type TimerHandle } from '../core/clock.js';
export { CodedError } from '../core/coded-error.js';
export type { RetryEvent, RetryReason } from './retry-event.js';
export type { BackoffOptions } from './backoff.js';
export type { ClientSpan, ClientTracing } from './client-tracing.js';
