import { IdempotentFetchError } from './fetch-error.js';
import { KEYED_METHODS } from './retry-policy.js';
import { uuidV7 } from './uuid-v7.js';

export const IDEMPOTENCY_KEY_HEADER = 'Idempotency-Key';

/** Visible ASCII, no comma (a repeated header is joined with one) and no leading quote (the structured-string form). */
const BARE_KEY = /^[\x21\x23-\x2b\x2d-\x7e][\x21-\x2b\x2d-\x7e]*$/;

/**
 * The key for one logical operation, chosen once before the first attempt:
 * the caller's (`idempotencyKey`, or an `Idempotency-Key` header already on
 * the request, sent as is), else a new version 7 UUID for POST and PATCH (a
 * time-ordered key: see `uuid-v7.ts`), else none.
 */
export function operationKey(method: string, given: string | undefined, headers: Headers): string | undefined {
  const header = headers.get(IDEMPOTENCY_KEY_HEADER);
  if (given !== undefined) {
    if (!BARE_KEY.test(given)) {
      throw keyError('idempotencyKey must be visible ASCII without commas, not starting with a double quote.', given);
    }
    if (header !== null && header !== given)
      throw keyError('idempotencyKey and the Idempotency-Key header disagree; pass one of them.', given);
    return given;
  }
  if (header !== null) return header;
  return KEYED_METHODS.has(method) ? uuidV7() : undefined;
}

function keyError(message: string, key: string): IdempotentFetchError {
  return new IdempotentFetchError('invalid-options', message, { attempts: 0, idempotencyKey: key });
}
