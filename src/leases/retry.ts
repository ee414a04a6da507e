import { randomUUID } from 'node:crypto';
import type { Idempotency } from '../modes/idempotency.js';
import type { OperationIdentity } from '../core/identity.js';
import type { UnknownActions } from '../store/operator-store.js';
import { fencingTokenRule } from '../store/operator-rules.js';
import { checkOptions } from '../core/option-rules.js';
import type { RecordReader } from '../store/record-reader.js';

export type RetryResult =
  | { readonly retried: true }
  /** `not-unknown`: absent, or not in the `unknown` state. `not-resumable`: unknown, but a transparent route or without its input, so nothing can run it again. */
  | { readonly retried: false; readonly why: 'not-unknown' | 'not-resumable' };

/**
 * Puts an `unknown` leased operation back into recovery once an operator has
 * fixed what stopped it (the provider's lookup answers again, a deploy was
 * rolled back). The next recovery worker pass or retry of the key takes it
 * over at once; steps it finished keep their recovery points, steps it
 * started are reconciled first. Its failures and give-up horizon start again.
 * With `options.fencingToken`, refused (`not-unknown`) when the record has
 * another: it ran again since the operator looked.
 */
export async function retryOperation<Tx>(
  config: Pick<Idempotency<Tx, Pick<UnknownActions, 'retryUnknown'> & RecordReader>, 'store'>,
  identity: OperationIdentity,
  reason: string,
  options: { readonly fencingToken?: number } = {},
): Promise<RetryResult> {
  checkOptions<{ readonly fencingToken?: number }>({ fencingToken: fencingTokenRule }, options);
  // An owner token nobody holds: the lease is expired at once, so only a take-over can write.
  if (await config.store.retryUnknown(identity, randomUUID(), reason, options.fencingToken)) return { retried: true };
  const record = await config.store.read(identity);
  return { retried: false, why: record?.state === 'unknown' ? 'not-resumable' : 'not-unknown' };
}
