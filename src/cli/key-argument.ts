import { InvalidArgumentError } from 'commander';
import { parseIdempotencyKey } from '../core/key.js';

/** What commands that name an operation say about their `<key>` argument. */
export const KEY_DESCRIPTION = 'the Idempotency-Key value, bare (abc) or quoted as the header may send it ("abc")';

/**
 * A commander parser for an `<key>` argument: the key is read as HTTP reads
 * the `Idempotency-Key` header, so a value pasted from a request log names the
 * same operation, and a key HTTP would refuse with 400 is a usage error.
 */
export function keyArgument(value: string): string {
  const parsed = parseIdempotencyKey(value);
  if (!parsed.ok) throw new InvalidArgumentError(parsed.detail);
  return parsed.key;
}
