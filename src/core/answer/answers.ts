import type { RetrysafeEvent } from '../events.js';
import type { OperationIdentity } from '../identity.js';
import type { Decision } from './decision.js';
import { type Problem, problem } from './problems.js';
import { problemReply, type Reply, replayed } from './reply.js';

/** What answering needs of the configuration: where problems point, how long to wait, and whom to tell. */
export interface AnswerSettings {
  readonly problemBase: string;
  readonly describedBy: string | undefined;
  readonly retryAfterSeconds: number;
  emit(this: void, event: RetrysafeEvent): void;
}

/** The answers retrysafe gives on its own behalf, each announced to the observers once. */

export function answerProblem(
  config: AnswerSettings,
  identity: OperationIdentity | undefined,
  p: Problem,
  operation = identity?.operation,
): Reply {
  if (identity !== undefined && p.code === 'fingerprint-mismatch')
    config.emit({ type: 'fingerprint-mismatch', identity });
  if (identity !== undefined && p.code === 'operation-in-progress') config.emit({ type: 'conflict', identity });
  config.emit({ type: 'problem', identity, operation, code: p.code });
  return problemReply(p, config.problemBase, config.describedBy);
}

export function answerExisting(config: AnswerSettings, identity: OperationIdentity, decision: Decision): Reply {
  if (decision.kind === 'problem') return answerProblem(config, identity, decision.problem);
  config.emit({ type: 'replayed', identity });
  return replayed(decision.reply);
}

/** A handler statement the server cut (statement_timeout or its own lock_timeout): nothing was stored, a retry may run. */
export function answerStatementTimeout(config: AnswerSettings, identity: OperationIdentity | undefined): Reply {
  const detail =
    'A statement of this operation ran out of time on the database, and nothing was stored. Retry later with the same Idempotency-Key.';
  return answerProblem(
    config,
    identity,
    problem('statement-timeout', detail, { retryAfter: config.retryAfterSeconds }),
  );
}

/** The handler caught a failed statement of its own and went on: PostgreSQL rolled everything back, so nothing was applied or stored. */
export function answerTransactionAborted(config: AnswerSettings, identity: OperationIdentity | undefined): Reply {
  const detail =
    'A statement of this operation failed and the operation went on without a savepoint, so the database aborted its transaction: nothing was applied and nothing was stored. A retry with the same Idempotency-Key runs it again, and fails the same way until the server is fixed.';
  return answerProblem(config, identity, problem('transaction-aborted', detail));
}

export function answerStoreUnavailable(
  config: AnswerSettings,
  identity: OperationIdentity | undefined,
  error: unknown,
): Reply {
  config.emit({ type: 'store-error', identity, error });
  const detail =
    'The idempotency store is unavailable, so the request may not have been processed. Retry later with the same Idempotency-Key.';
  return answerProblem(
    config,
    identity,
    problem('store-unavailable', detail, { retryAfter: config.retryAfterSeconds }),
  );
}
