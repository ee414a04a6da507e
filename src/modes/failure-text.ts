/**
 * Longest failure text a record keeps, in UTF-16 code units: at most 3000
 * bytes of UTF-8, within the 4096 bytes its columns allow.
 */
const MAX_FAILURE_TEXT = 1000;

/** `text` as a record keeps it: cut at the bound, with an ellipsis where it was cut. */
export function boundedFailureText(text: string): string {
  return text.length > MAX_FAILURE_TEXT ? `${text.slice(0, MAX_FAILURE_TEXT - 1)}…` : text;
}

/** What an attempt threw, as the record keeps it for an operator. */
export function failureMessage(error: unknown): string {
  return boundedFailureText(error instanceof Error ? String(error.message) : String(error));
}
