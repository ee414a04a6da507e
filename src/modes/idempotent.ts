import { type Idempotency } from './idempotency.js';
import { defineRoute } from '../core/route.js';
import type { ProblemCode } from '../core/answer/problems.js';
import type { AtomicRoute, IncomingRequest } from '../core/route.js';
import type { RetentionSetting } from '../core/route-settings.js';
import { runAtomic } from './run-atomic.js';
import type { AtomicStore } from '../store/atomic-store.js';
import type { RecordReader } from '../store/record-reader.js';

export interface IdempotentOptions<Input> {
  /** `name@version`, for example `invoices.send@1`. Part of the identity. */
  readonly operation: string;
  /** The work's key: a message id, a job id, or several joined. Checked like an `Idempotency-Key`. */
  readonly key: string;
  /** Scopes the key. Default `default`. */
  readonly tenant?: string;
  /** What the work is about. Fingerprinted: the same key with another input is refused as `fingerprint-mismatch`. */
  readonly input?: Input;
  /** This operation's retention, over the configuration's. */
  readonly retention?: RetentionSetting;
}

/** How an idempotent piece of work ended; a thrown error rolls everything back and is rethrown. */
export type IdempotentOutcome<T> =
  /** The work ran now, and its result committed with the record. */
  | { readonly kind: 'ran'; readonly value: T }
  /** The work ran before; this is its stored result, read back from JSON. */
  | { readonly kind: 'replayed'; readonly value: T }
  /**
   * retrysafe refused: the work did not run. `operation-in-progress` (another
   * worker runs it now: try again after `retryAfterSeconds`),
   * `fingerprint-mismatch`, `response-expired`, `outcome-unknown`,
   * `store-unavailable`, or a bad key (`idempotency-key-invalid`).
   */
  | { readonly kind: 'refused'; readonly code: ProblemCode; readonly retryAfterSeconds: number | undefined };

/**
 * Runs `work` at most once per key, for work that is not an HTTP request: a
 * job, a message handler. It is an atomic route without HTTP: `work` writes
 * through `tx`, in the transaction that claims the key and stores its result,
 * on the same store and with the same guarantees. The result must be JSON.
 *
 * @example
 * const outcome = await idempotent(config, (tx) => chargeInvoice(tx, message.invoiceId), {
 *   operation: 'invoices.charge@1',
 *   key: message.id,
 *   input: message.body,
 * });
 * if (outcome.kind === 'refused' && outcome.code === 'operation-in-progress') return nackLater(outcome.retryAfterSeconds);
 */
export async function idempotent<T, Input, Tx>(
  config: Idempotency<Tx, AtomicStore<Tx> & RecordReader>,
  work: (tx: Tx, input: Input | undefined) => Promise<T>,
  options: IdempotentOptions<Input>,
): Promise<IdempotentOutcome<T>> {
  let replayed = false;
  let refused: ProblemCode | undefined;
  const route: AtomicRoute<undefined, Input | undefined, Tx> = defineRoute({
    operation: options.operation,
    tenant: () => options.tenant ?? 'default',
    key: () => options.key,
    input: () => ({ valid: true, value: options.input }),
    fingerprint: (_request, input) => ({ input: input ?? null }),
    ...(options.retention === undefined ? {} : { retention: options.retention }),
    onReplay: () => {
      replayed = true;
    },
    onRefusal: ({ code }) => {
      refused = code;
    },
    handler: async ({ tx, input }) => ({ status: 200, body: { value: (await work(tx, input)) ?? null } }),
  });
  const incoming: IncomingRequest<undefined> = {
    raw: undefined,
    method: 'POST',
    path: options.operation,
    header: () => undefined,
    body: options.input,
  };
  const reply = await runAtomic(config, route, incoming);
  if (refused !== undefined) {
    const retryAfter = reply.headers['retry-after'];
    return {
      kind: 'refused',
      code: refused,
      retryAfterSeconds: retryAfter === undefined ? undefined : Number(retryAfter),
    };
  }
  const { value } = JSON.parse(Buffer.from(reply.body).toString('utf8')) as { value: T };
  return { kind: replayed ? 'replayed' : 'ran', value };
}
