export { RetrysafeError, isRetrysafeError, type RetrysafeErrorCode } from './core/errors.js';
export type { Fingerprint } from './core/fingerprint.js';
export { identityHash, type OperationIdentity } from './core/identity.js';
export { idempotency, defineRoute, type Idempotency, type IdempotencyOptions } from './core/idempotency.js';
export type { ReadBeforeClaim, ReadFirst } from './core/read-first.js';
export { defaultKeyLimits, type KeyLimits } from './core/key.js';
export { defaultPolicy, type OutcomePolicy } from './core/policy.js';
export { defaultProblemBase, type Problem, type ProblemCode } from './core/problems.js';
export type { FinishedRecord, InProgressRecord, OperationMode, OperationRecord, RecordState, TombstoneRecord, UnknownRecord } from './core/record.js';
export { REPLAYED_HEADER, type HandlerReply, type Reply } from './core/reply.js';
export { invalid, valid, type AtomicContext, type AtomicRoute, type RouteDefinition, type RouteEvent, type RouteRefusal, type Validation } from './core/route.js';
export type { Observer, RetrysafeEvent, RetrysafeEventOf } from './core/events.js';
export type { Tracing } from './core/tracing.js';
export { idempotent, type IdempotentOptions, type IdempotentOutcome } from './core/idempotent.js';
export type { RetentionSetting, RouteSettings } from './core/route-settings.js';
export type { BackoffOptions } from './client/backoff.js';
export type { SqlClient, SqlDatabase, Statement } from './store/sql-client.js';
export {
  downstreamKey,
  RecoveryWorker,
  resolveOperation,
  retryOperation,
  type LeasedContext,
  type LeasedOperation,
  type LeasedRoute,
  type Reconciliation,
  type RecoveryReport,
  type RecoveryWorkerOptions,
  type Resolution,
  type ResolveResult,
  type RetryResult,
  type StepCall,
  type StepOptions,
} from './leases/index.js';
// The store seam, for a store of one's own (its contract suite is `retrysafe/testing`) and for decorators.
export {
  defaultRetention,
  type AtomicClaim,
  type AtomicTransaction,
  type ClaimRequest,
  type Completion,
  type ExpiredLease,
  type Lease,
  type LeaseClaim,
  type LeaseRequest,
  type LeaseStore,
  type OperationStore,
  type Owned,
  type Release,
  type Retention,
  type Settlement,
  type StepProgress,
} from './store/operation-store.js';
