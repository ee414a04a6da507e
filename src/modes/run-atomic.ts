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
import { prepare } from './prepare.js';
import { type Reply, toReply } from '../core/answer/reply.js';
import type { AtomicRoute, IncomingRequest } from '../core/route.js';
import { routeAttempt } from './route-attempt.js';
import type { AtomicStore } from '../store/atomic-store.js';
import type { RecordReader } from '../store/record-reader.js';

/**
 * Runs one attempt of an atomic route: the claim, the handler's writes and the
 * stored outcome commit in one transaction, or nothing does. Handler errors are
 * rethrown after the rollback, for the framework's error handling.
 */
export function runAtomic<Req, Input, Tx>(
  config: Idempotency<Tx, AtomicStore<Tx> & RecordReader>,
  route: AtomicRoute<Req, Input, Tx>,
  incoming: IncomingRequest<Req>,
): Promise<Reply> {
  return routeAttempt(config, route, incoming.raw, 'atomic', (own) => attemptAtomic(own, route, incoming));
}

async function attemptAtomic<Req, Input, Tx>(
  config: Idempotency<Tx, AtomicStore<Tx> & RecordReader>,
  route: AtomicRoute<Req, Input, Tx>,
  incoming: IncomingRequest<Req>,
): Promise<Reply> {
  const prepared = await prepare(config, route, incoming);
  if (prepared.kind === 'answered') return prepared.reply;
  const { tenant, input } = prepared;
  const identity = prepared.kind === 'keyed' ? prepared.identity : undefined;
  if (prepared.kind === 'keyed') {
    crashPoint('before-claim');
    // A finished record kept in memory answers before any timer, promise or closure of the store path is made.
    const kept = config.recall(prepared.identity);
    if (kept !== undefined) {
      config.readFirst(prepared.identity.operation).observe(true);
      return answerExisting(config, prepared.identity, decideExisting(kept, prepared.fingerprint, prepared.principal));
    }
  }
  // Every store phase has its budget (the configuration's store applies it), the rollback included. An answer
  // decided before a rollback (a replay, a mismatch, a busy claim, an unstored status) stands whatever the
  // rollback does: nothing was stored. A handler that throws is rolled back on a budget too; past it the answer
  // is 503, as the store did not confirm.
  let decided: Reply | undefined;
  const rollBack = (reply: Reply): { readonly commit: false; readonly value: Reply } => {
    decided = reply;
    return { commit: false, value: reply };
  };
  try {
    if (prepared.kind === 'unkeyed') {
      return await config.store.transaction(async (tx) =>
        toReply(await route.handler({ request: incoming.raw, input, tx, tenant, identity })),
      );
    }
    const { identity: claimed } = prepared;
    const readFirst = config.readFirst(claimed.operation);
    if (readFirst.now) {
      // A completed record only ever changes into a tombstone, so it answers a retry in one read, without a transaction.
      const known = await config.store.read(claimed);
      if (known !== undefined && known.state !== 'in_progress') {
        readFirst.observe(true);
        return answerExisting(config, claimed, decideExisting(known, prepared.fingerprint, prepared.principal));
      }
    }
    const lockTimeoutMs = route.lockTimeoutMs ?? config.lockTimeoutMs;
    const started = performance.now();
    const reply = await config.store.atomic(
      {
        identity: claimed,
        fingerprint: prepared.fingerprint,
        principal: prepared.principal,
        lockTimeoutMs,
        statementTimeoutMs: config.statementTimeoutMs,
      },
      async ({ claim, tx }) => {
        if (claim.kind !== 'busy') readFirst.observe(claim.kind === 'existing' && claim.record.state !== 'in_progress');
        if (claim.kind !== 'claimed') {
          if (claim.kind === 'busy' || claim.waited)
            config.emit({ type: 'lock-wait', identity: claimed, ms: performance.now() - started });
          return rollBack(
            claim.kind === 'busy'
              ? answerProblem(config, claimed, inProgress(config.retryAfterSeconds))
              : answerExisting(config, claimed, decideExisting(claim.record, prepared.fingerprint, prepared.principal)),
          );
        }
        crashPoint('after-claim');
        config.emit({ type: 'claimed', identity: claimed, mode: 'atomic' });
        const reply = toReply(await route.handler({ request: incoming.raw, input, tx, tenant, identity: claimed }));
        const stored = isStoredStatus(reply.status, config.policy);
        config.emit({ type: 'finished', identity: claimed, mode: 'atomic', status: reply.status, stored });
        if (!stored) return rollBack(reply);
        const completion = completionOf(reply, config.policy, config.retentionFor(claimed));
        // The record is written with the commit, so this is the last point before both.
        crashPoint('before-commit');
        return { commit: true, value: reply, completion };
      },
      // A writer that did not wait for the claim stored a record first: everything rolled back, the record answers.
      (record) => answerExisting(config, claimed, decideExisting(record, prepared.fingerprint, prepared.principal)),
    );
    crashPoint('after-commit');
    return reply;
  } catch (error) {
    if (decided !== undefined) return decided;
    if (isRetrysafeError(error, 'store-unavailable')) return answerStoreUnavailable(config, identity, error);
    if (isRetrysafeError(error, 'statement-timeout')) return answerStatementTimeout(config, identity);
    if (isRetrysafeError(error, 'transaction-aborted')) return answerTransactionAborted(config, identity);
    throw error;
  }
}
