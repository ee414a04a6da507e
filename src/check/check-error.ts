import { CodedError } from '../core/coded-error.js';

/**
 * Why a check could not run at all. A probe that fails is a result in the
 * report, never an error.
 */
export type CheckErrorCode =
  /** The options are incomplete, malformed or contradictory. */
  | 'invalid-options'
  /** The endpoint or the count URL could not be reached. */
  | 'unreachable'
  /** The count URL did not answer 200 with JSON holding an array. */
  | 'count-unreadable';

/** What `check` throws when it cannot run at all. */
export class CheckError extends CodedError<CheckErrorCode> {
  override readonly name = 'CheckError';
}

export function isCheckError(error: unknown, code?: CheckErrorCode): error is CheckError {
  return error instanceof CheckError && (code === undefined || error.code === code);
}
