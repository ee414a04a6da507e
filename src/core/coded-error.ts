/**
 * The shape of every error retrysafe throws: a stable `code` from a closed
 * list (each subclass names its own), a message, and the `cause` when there is
 * one. `instanceof` tells the subclasses apart; `code` is what to branch on.
 */
export abstract class CodedError<Code extends string> extends Error {
  readonly code: Code;

  constructor(code: Code, message: string, options?: { readonly cause?: unknown }) {
    super(message, options);
    this.code = code;
  }
}
