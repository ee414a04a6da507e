import { CodedError } from './coded-error.js';

/**
 * Stable codes for the failures retrysafe throws. Decisions about a request are
 * never thrown: they are `Decision` values. Only misuse and store failures are.
 */
export type RetrysafeErrorCode =
  /** The library was configured or called in a way it does not support. */
  | 'misuse'
  /** The operation store could not be reached, failed, or was too slow. */
  | 'store-unavailable'
  /** One of the handler's own statements ran out of time on the server (statement_timeout, or a lock_timeout of its own). */
  | 'statement-timeout'
  /** The store's schema is newer than this version of the library understands. */
  | 'schema-too-new'
  /** A worker tried to write to an operation whose lease it no longer holds. */
  | 'lease-lost'
  /** A resumed handler asked for a step no earlier attempt started while a started one has no result: its steps changed between attempts. */
  | 'steps-changed'
  /**
   * One of the handler's own statements failed and the handler went on without a savepoint: PostgreSQL aborted the
   * transaction, so the record could not be written and nothing the handler did stands.
   */
  | 'transaction-aborted'
  /** A stored response body could not be decrypted: the cause of a `store-unavailable` error. */
  | 'decryption-failed';

/** What retrysafe throws: misuse and store failures, never a decision about a request. */
export class RetrysafeError extends CodedError<RetrysafeErrorCode> {
  override readonly name = 'RetrysafeError';
}

export function isRetrysafeError(error: unknown, code?: RetrysafeErrorCode): error is RetrysafeError {
  return error instanceof RetrysafeError && (code === undefined || error.code === code);
}
