import type { Idempotency } from '../modes/idempotency.js';
import type { OperationIdentity } from '../core/identity.js';
import { storedPart } from '../core/storage-policy.js';
import { type HandlerReply, toReply } from '../core/answer/reply.js';
import type { UnknownActions } from '../store/operator-store.js';
import { fencingTokenRule } from '../store/operator-rules.js';
import { checkOptions } from '../core/option-rules.js';

/** An operator's verdict on an operation whose outcome was unknown. */
export interface Resolution {
  /** `completed`: the effect happened; `failed`: it did not and will not. */
  readonly state: 'completed' | 'failed';
  /** What retries of this key will be answered from now on. */
  readonly reply: HandlerReply;
  /** Kept with the record for audit. */
  readonly reason: string;
  /**
   * The fencing token the operator saw: the verdict is refused when the record
   * has another, because it ran again since (a console page drawn before a retry).
   */
  readonly fencingToken?: number;
}

export type ResolveResult = { readonly resolved: true } | { readonly resolved: false; readonly why: 'not-unknown' };

/** Resolves an `unknown` operation after an operator has reconciled it by hand: completes it with the operator's verdict. */
export async function resolveOperation<Tx>(
  config: Pick<Idempotency<Tx, Pick<UnknownActions, 'resolveUnknown'>>, 'store' | 'policy' | 'retentionFor'>,
  identity: OperationIdentity,
  resolution: Resolution,
): Promise<ResolveResult> {
  checkOptions<Resolution>({ fencingToken: fencingTokenRule }, resolution);
  const completion = {
    state: resolution.state,
    reply: storedPart(toReply(resolution.reply), config.policy),
    retention: config.retentionFor(identity),
  };
  const resolved = await config.store.resolveUnknown(identity, completion, resolution.reason, resolution.fencingToken);
  return resolved ? { resolved: true } : { resolved: false, why: 'not-unknown' };
}
