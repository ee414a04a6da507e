import { randomUUID } from 'node:crypto';
import { isRetrysafeError, RetrysafeError } from '../core/errors.js';
import { type Fingerprint, sameFingerprint } from '../core/fingerprint.js';
import type { Idempotency } from './idempotency.js';
import { decideExisting, inProgress } from '../core/answer/decision.js';
import { prepare } from './prepare.js';
import { problem } from '../core/answer/problems.js';
import { type PrincipalDigest, samePrincipal } from '../core/principal.js';
import type { InProgressRecord, OperationRecord } from '../core/record.js';
import type { Reply } from '../core/answer/reply.js';
import { answerExisting, answerProblem, answerStoreUnavailable } from '../core/answer/answers.js';
import type { IncomingRequest } from '../core/route.js';
import { crashPoint } from '../core/crash-point.js';
import { routeAttempt } from './route-attempt.js';
import type { Lease, LeaseClaims } from '../store/lease-store.js';
import { type LeasedRunStore, runWithLease } from './run-with-lease.js';
import type { LeasedRoute } from './leased-route.js';
import { extend } from '../core/extend.js';

/**
 * Runs one attempt of a leased route. The claim commits first; a retry that
 * finds the lease expired takes the operation over and resumes it from its
 * recovery points. Handler errors are rethrown for the framework.
 */
export function runLeased<Req, Input, Tx>(
  config: Idempotency<Tx, LeaseClaims & LeasedRunStore<Tx>>,
  route: LeasedRoute<Req, Input, Tx>,
  incoming: IncomingRequest<Req>,
): Promise<Reply> {
  return routeAttempt(config, route, incoming.raw, 'leased', (own) => attemptLeased(own, route, incoming));
}

async function attemptLeased<Req, Input, Tx>(
  config: Idempotency<Tx, LeaseClaims & LeasedRunStore<Tx>>,
  route: LeasedRoute<Req, Input, Tx>,
  incoming: IncomingRequest<Req>,
): Promise<Reply> {
  const prepared = await prepare(config, extend(route, { keyRequired: true }), incoming);
  if (prepared.kind === 'answered') return prepared.reply;
  if (prepared.kind === 'unkeyed') {
    throw new RetrysafeError('misuse', `Leased route ${route.operation} only serves POST and PATCH.`);
  }
  const { identity } = prepared;
  const inProgressNow = (): Reply => answerProblem(config, identity, inProgress(config.retryAfterSeconds));
  try {
    const owner = randomUUID();
    crashPoint('before-claim');
    const claim = await config.store.claimLease({
      identity,
      fingerprint: prepared.fingerprint,
      principal: prepared.principal,
      // Stored as JSON and read back the same way on every attempt.
      input: JSON.parse(JSON.stringify(prepared.input ?? null)) as unknown,
      mode: 'leased',
      ownerToken: owner,
      leaseSeconds: config.leaseSeconds,
    });
    let lease: Lease;
    if (claim.kind === 'claimed') {
      config.emit({ type: 'claimed', identity, mode: 'leased' });
      lease = claim.lease;
    } else {
      const { record } = claim;
      if (!isResumable(record, prepared))
        return answerExisting(config, identity, decideExisting(record, prepared.fingerprint, prepared.principal));
      const taken = await config.store.takeOver(identity, record.fencingToken, owner, config.leaseSeconds);
      if (taken === undefined) return inProgressNow();
      config.emit({ type: 'taken-over', identity, attempt: taken.attempt, by: 'retry' });
      lease = taken;
    }
    crashPoint('after-claim');
    const run = await runWithLease(config, route, lease);
    switch (run.kind) {
      case 'completed':
      case 'not-stored':
        return run.reply;
      case 'lost':
        return inProgressNow();
      case 'unknown':
        return answerProblem(
          config,
          identity,
          problem(
            'outcome-unknown',
            'The outcome of this operation could not be confirmed; it is awaiting reconciliation and will not run again.',
          ),
        );
      case 'threw':
        throw run.error;
    }
  } catch (error) {
    if (isRetrysafeError(error, 'store-unavailable')) return answerStoreUnavailable(config, identity, error);
    throw error;
  }
}

/** An expired lease on the same request of the same principal: the retry may take the operation over. */
function isResumable(
  record: OperationRecord,
  request: { readonly fingerprint: Fingerprint; readonly principal: PrincipalDigest | undefined },
): record is InProgressRecord {
  return (
    record.state === 'in_progress' &&
    record.mode === 'leased' &&
    record.leaseExpiresAt <= record.readAt &&
    samePrincipal(record.principal, request.principal) &&
    sameFingerprint(record.fingerprint, request.fingerprint)
  );
}
