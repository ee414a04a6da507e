import {
  answerExisting,
  answerProblem,
  answerStatementTimeout,
  answerStoreUnavailable,
  answerTransactionAborted,
} from '../core/answer/answers.js';
import { crashPoint } from '../core/crash-point.js';
import { isRetrysafeError } from '../core/errors.js';
import type { Idempotency } from './idempotency.js';
import { decideExisting, inProgress } from '../core/answer/decision.js';
import { completionOf, isStoredStatus } from '../core/storage-policy.js';
import { type Prepared, prepare } from './prepare.js';
import type { ReadFirst } from './read-first.js';
import type { OperationIdentity } from '../core/identity.js';
import { type Reply, toReply } from '../core/answer/reply.js';
import type { AtomicRoute, IncomingRequest } from '../core/route.js';
import { routeAttempt } from './route-attempt.js';
import type { AtomicClaim, AtomicStore, Settlement } from '../store/atomic-store.js';
import type { RecordReader } from '../store/record-reader.js';

/**
 * Runs one attempt of an atomic route: the claim, the handler's writes and the
 * completion commit in one transaction, or nothing does. Handler errors are
 * rethrown after the rollback, for the framework's error handling.
 */
export function runAtomic<Req, Input, Tx>(
  config: Idempotency<Tx, AtomicStore<Tx> & RecordReader>,
  route: AtomicRoute<Req, Input, Tx>,
  incoming: IncomingRequest<Req>,
): Promise<Reply> {
  return routeAttempt(config, route, incoming.raw, 'atomic', (own) => attemptAtomic(own, route, incoming));
}

/** A keyed request, ready for the store. */
type Keyed<Input> = Extract<Prepared<Input>, { kind: 'keyed' }>;

/** A phase's verdict on the claimed transaction: roll it back with this answer, or run the handler. */
type ClaimVerdict = { readonly kind: 'answered'; readonly reply: Reply } | { readonly kind: 'run' };

function attemptAtomic<Req, Input, Tx>(
  config: Idempotency<Tx, AtomicStore<Tx> & RecordReader>,
  route: AtomicRoute<Req, Input, Tx>,
  incoming: IncomingRequest<Req>,
): Promise<Reply> {
  // Chained, not awaited: an async function and each of its awaits cost every request a promise more.
  return prepare(config, route, incoming).then((prepared) => {
    if (prepared.kind === 'answered') return prepared.reply;
    if (prepared.kind === 'unkeyed') return runUnkeyed(config, route, incoming, prepared);
    crashPoint('before-claim');
    return recalled(config, prepared) ?? readOrClaim(config, route, incoming, prepared);
  });
}

/** No key: the handler runs in a plain transaction, without deduplication. */
async function runUnkeyed<Req, Input, Tx>(
  config: Idempotency<Tx, AtomicStore<Tx>>,
  route: AtomicRoute<Req, Input, Tx>,
  incoming: IncomingRequest<Req>,
  { tenant, input }: { readonly tenant: string; readonly input: Input },
): Promise<Reply> {
  try {
    return await config.store.transaction(async (tx) =>
      toReply(await route.handler({ request: incoming.raw, input, tx, tenant, identity: undefined })),
    );
  } catch (error) {
    return answerFailure(config, undefined, error);
  }
}

/** A finished record kept in memory answers before any timer, promise or closure of the store path is made. */
function recalled<Input>(config: Idempotency<unknown, unknown>, keyed: Keyed<Input>): Reply | undefined {
  const kept = config.recall(keyed.identity);
  if (kept === undefined) return undefined;
  config.readFirst(keyed.identity.operation).observe(true);
  return answerExisting(config, keyed.identity, decideExisting(kept, keyed.fingerprint, keyed.principal));
}

/**
 * The read before the claim, when the operation's requests are mostly
 * replays: a completed record only ever changes into a tombstone, so it
 * answers a retry in one read, without a transaction. Otherwise, or when
 * the read finds no finished record, the claim.
 */
function readOrClaim<Req, Input, Tx>(
  config: Idempotency<Tx, AtomicStore<Tx> & RecordReader>,
  route: AtomicRoute<Req, Input, Tx>,
  incoming: IncomingRequest<Req>,
  keyed: Keyed<Input>,
): Promise<Reply> {
  const { identity } = keyed;
  const readFirst = config.readFirst(identity.operation);
  // Not even called otherwise: a read that is not needed still costs its promises.
  if (!readFirst.now) return claimAndRun(config, route, incoming, keyed, readFirst);
  return config.store.read(identity).then(
    (known) => {
      if (known === undefined || known.state === 'in_progress')
        return claimAndRun(config, route, incoming, keyed, readFirst);
      readFirst.observe(true);
      return answerExisting(config, identity, decideExisting(known, keyed.fingerprint, keyed.principal));
    },
    (error: unknown) => answerFailure(config, identity, error),
  );
}

/**
 * The claim, the handler and the completion in one transaction. Every store
 * phase has its budget (the configuration's store applies it), the rollback
 * included. An answer decided before a rollback (a replay, a mismatch, a busy
 * claim, an unstored status) stands whatever the rollback does: nothing was
 * stored. A handler that throws is rolled back on a budget too; past it the
 * answer is 503, as the store did not confirm.
 */
async function claimAndRun<Req, Input, Tx>(
  config: Idempotency<Tx, AtomicStore<Tx> & RecordReader>,
  route: AtomicRoute<Req, Input, Tx>,
  incoming: IncomingRequest<Req>,
  keyed: Keyed<Input>,
  readFirst: ReadFirst,
): Promise<Reply> {
  const { identity, fingerprint, principal, tenant, input } = keyed;
  let decided: Reply | undefined;
  try {
    const lockTimeoutMs = route.lockTimeoutMs ?? config.lockTimeoutMs;
    const started = performance.now();
    const reply = await config.store.atomic(
      {
        identity,
        fingerprint,
        principal,
        lockTimeoutMs,
        statementTimeoutMs: config.statementTimeoutMs,
        clock: config.clock,
      },
      async ({ claim, tx }): Promise<Settlement<Reply>> => {
        const verdict = judgeClaim(config, keyed, claim, readFirst, started);
        if (verdict.kind === 'answered') {
          decided = verdict.reply;
          return { commit: false, value: verdict.reply };
        }
        crashPoint('after-claim');
        config.emit({ type: 'claimed', identity, mode: 'atomic' });
        const settlement = finish(
          config,
          identity,
          toReply(await route.handler({ request: incoming.raw, input, tx, tenant, identity })),
        );
        if (!settlement.commit) decided = settlement.value;
        return settlement;
      },
      // A writer that did not wait for the claim stored a record first: everything rolled back, the record answers.
      (record) => answerExisting(config, identity, decideExisting(record, fingerprint, principal)),
    );
    crashPoint('after-commit');
    return reply;
  } catch (error) {
    return decided ?? answerFailure(config, identity, error);
  }
}

/** What the claim says: run the handler, or answer from the record that holds the identity, or 409 when busy. */
function judgeClaim<Input>(
  config: Idempotency<unknown, unknown>,
  keyed: Keyed<Input>,
  claim: AtomicClaim,
  readFirst: ReadFirst,
  started: number,
): ClaimVerdict {
  const { identity } = keyed;
  if (claim.kind !== 'busy') readFirst.observe(claim.kind === 'existing' && claim.record.state !== 'in_progress');
  if (claim.kind === 'claimed') return { kind: 'run' };
  if (claim.kind === 'busy' || claim.waited)
    config.emit({ type: 'lock-wait', identity, ms: performance.now() - started });
  return {
    kind: 'answered',
    reply:
      claim.kind === 'busy'
        ? answerProblem(config, identity, inProgress(config.retryAfterSeconds))
        : answerExisting(config, identity, decideExisting(claim.record, keyed.fingerprint, keyed.principal)),
  };
}

/** The handler's answer: committed with its completion when the policy stores it, else rolled back. */
function finish(config: Idempotency<unknown, unknown>, identity: OperationIdentity, reply: Reply): Settlement<Reply> {
  const stored = isStoredStatus(reply.status, config.policy);
  config.emit({ type: 'finished', identity, mode: 'atomic', status: reply.status, stored });
  if (!stored) return { commit: false, value: reply };
  const completion = completionOf(reply, config.policy, config.retentionFor(identity));
  // The record is written with the commit, so this is the last point before both.
  crashPoint('before-commit');
  return { commit: true, value: reply, completion };
}

/** A failure of the store or of the handler's statements, as the answer it gives; anything else is rethrown. */
function answerFailure(
  config: Idempotency<unknown, unknown>,
  identity: OperationIdentity | undefined,
  error: unknown,
): Reply {
  if (isRetrysafeError(error, 'store-unavailable')) return answerStoreUnavailable(config, identity, error);
  if (isRetrysafeError(error, 'statement-timeout')) return answerStatementTimeout(config, identity);
  if (isRetrysafeError(error, 'transaction-aborted')) return answerTransactionAborted(config, identity);
  throw error;
}
