import { isRetrysafeError } from './errors.js';
import type { Idempotency } from './idempotency.js';
import { decideExisting, inProgress } from './outcome.js';
import { isStoredStatus, storedPart } from './policy.js';
import { prepare } from './prepare.js';
import { problem } from './problems.js';
import { problemReply, type Reply, replayed, toReply } from './reply.js';
import type { AtomicRoute, IncomingRequest } from './route.js';
import { StoreClock } from './store-clock.js';
import { crashPoint } from './crash-point.js';

/**
 * Runs one attempt of an atomic route: the claim, the handler's writes and the
 * stored outcome commit in one transaction, or nothing does. Handler errors are
 * rethrown after the rollback, for the framework's error handling.
 */
export async function runAtomic<Req, Input, Tx>(
  config: Idempotency<Tx>,
  route: AtomicRoute<Req, Input, Tx>,
  incoming: IncomingRequest<Req>,
): Promise<Reply> {
  const prepared = await prepare(config, route, incoming);
  if (prepared.kind === 'answered') return prepared.reply;
  const { tenant, input } = prepared;
  const clock = new StoreClock();
  try {
    if (prepared.kind === 'unkeyed') {
      return await config.store.transaction(async (tx) => toReply(await route.handler({ request: incoming.raw, input, tx, tenant, identity: undefined })));
    }
    const { identity } = prepared;
    crashPoint('before-claim');
    clock.enterStore(config.storeTimeoutMs + config.lockTimeoutMs);
    const reply = await clock.race(
      config.store.atomic({ identity, fingerprint: prepared.fingerprint, lockTimeoutMs: config.lockTimeoutMs }, async ({ claim, tx, complete }) => {
        clock.leaveStore();
        switch (claim.kind) {
          case 'busy':
            return { commit: false, value: problemReply(inProgress(config.retryAfterSeconds), config.problemBase) };
          case 'existing': {
            const outcome = decideExisting(claim.record, prepared.fingerprint);
            return { commit: false, value: outcome.kind === 'replay' ? replayed(outcome.reply) : problemReply(outcome.problem, config.problemBase) };
          }
          case 'claimed': {
            crashPoint('after-claim');
            const reply = toReply(await route.handler({ request: incoming.raw, input, tx, tenant, identity }));
            if (!isStoredStatus(reply.status, config.policy)) return { commit: false, value: reply };
            clock.enterStore(config.storeTimeoutMs);
            await complete({ state: 'completed', reply: storedPart(reply, config.policy), retention: config.retention });
            crashPoint('before-commit');
            return { commit: true, value: reply };
          }
        }
      }),
    );
    crashPoint('after-commit');
    return reply;
  } catch (error) {
    if (isRetrysafeError(error, 'store-unavailable')) {
      return problemReply(problem('store-unavailable', 'The idempotency store is unavailable; the request was not processed. Retry later.', { retryAfter: config.retryAfterSeconds }), config.problemBase);
    }
    throw error;
  }
}
