import { CodedError } from '../core/coded-error.js';

/**
 * Why `idempotentFetch` threw instead of returning an answer. `docs/client.md`
 * lists the same codes; a test keeps the two equal.
 */
export const idempotentFetchErrorCodes = [
  /** The options or the key were unusable; nothing was sent. */
  'invalid-options',
  /** The body is a stream, which cannot be sent again on a retry; nothing was sent. */
  'body-not-replayable',
  /** The caller's signal aborted the call. */
  'aborted',
  /** The deadline passed, or would have passed before the next attempt could start. */
  'deadline-exceeded',
  /** Every allowed attempt failed without an answer (network error or attempt timeout). */
  'attempts-exhausted',
] as const;

export type IdempotentFetchErrorCode = (typeof idempotentFetchErrorCodes)[number];

export interface IdempotentFetchErrorDetails {
  /** Attempts actually sent. */
  readonly attempts: number;
  /** The key every attempt carried; keep it to retry the same operation later. */
  readonly idempotencyKey: string | undefined;
  /** The last network error, or the abort reason. */
  readonly cause?: unknown;
}

/**
 * What `idempotentFetch` throws. An answer from the server is never thrown,
 * even a retryable one it stopped retrying; only the absence of an answer is.
 */
export class IdempotentFetchError extends CodedError<IdempotentFetchErrorCode> {
  override readonly name = 'IdempotentFetchError';
  readonly attempts: number;
  readonly idempotencyKey: string | undefined;

  constructor(code: IdempotentFetchErrorCode, message: string, details: IdempotentFetchErrorDetails) {
    super(code, message, 'cause' in details ? { cause: details.cause } : undefined);
    this.attempts = details.attempts;
    this.idempotencyKey = details.idempotencyKey;
  }
}

export function isIdempotentFetchError(error: unknown, code?: IdempotentFetchErrorCode): error is IdempotentFetchError {
  return error instanceof IdempotentFetchError && (code === undefined || error.code === code);
}
