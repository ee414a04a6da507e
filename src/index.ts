export { RetrysafeError, isRetrysafeError, type RetrysafeErrorCode } from './core/errors.js';
export { fingerprint, sameFingerprint, type Fingerprint } from './core/fingerprint.js';
export { identityHash, type OperationIdentity } from './core/identity.js';
export { idempotency, type Idempotency, type IdempotencyOptions } from './modes/idempotency.js';
export { defineRoute } from './core/route.js';
export type { ReadBeforeClaim } from './modes/read-first.js';
export { parseIdempotencyKey, defaultKeyLimits, type KeyDefect, type KeyLimits, type ParsedKey } from './core/key.js';
export { decideExisting, type Decision } from './core/answer/decision.js';
export { defaultPolicy, isStoredStatus, type StoragePolicy } from './core/storage-policy.js';
export { problemCatalogue, problemDocument, defaultProblemBase, type Problem, type ProblemCode } from './core/answer/problems.js';
export type { OperationRecord, RecordState } from './core/record.js';
export { REPLAYED_HEADER, problemReply, toReply, type HandlerReply, type Reply } from './core/answer/reply.js';
export { invalid, valid, type AtomicContext, type AtomicRoute, type IncomingRequest, type RouteDefinition, type RouteEvent, type RouteRefusal, type Validation } from './core/route.js';
export { runAtomic } from './modes/run-atomic.js';
export { idempotent, type IdempotentOptions, type IdempotentOutcome } from './modes/idempotent.js';
export type { RetentionSetting, RouteSettings } from './core/route-settings.js';
export type { OperationStore } from './store/operation-store.js';
export type { AtomicStore } from './store/atomic-store.js';
export type { RecordReader } from './store/record-reader.js';
export { defaultRetention, type Retention } from './core/retention.js';
export type { SqlClient, SqlDatabase } from './store/sql-client.js';
export {
  downstreamKey,
  RecoveryWorker,
  resolveOperation,
  retryOperation,
  runLeased,
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
export type { Lease, LeaseStore, Release, StepProgress } from './store/lease-store.js';
