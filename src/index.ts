export { CodedError } from './core/coded-error.js';
export { RetrysafeError, isRetrysafeError, type RetrysafeErrorCode } from './core/errors.js';
export type { Fingerprint } from './core/fingerprint.js';
export type { PrincipalDigest } from './core/principal.js';
export { identityHash, type OperationIdentity } from './core/identity.js';
export { idempotency, type Idempotency, type IdempotencyOptions } from './modes/idempotency.js';
export { defineRoute } from './core/route.js';
export type { ReadBeforeClaim, ReadFirst } from './modes/read-first.js';
export { defaultKeyLimits, type KeyLimits } from './core/key.js';
export { defaultPolicy, type StoragePolicy } from './core/storage-policy.js';
export {
  type Applied,
  defaultProblemBase,
  type Problem,
  type ProblemCode,
  type RetryGuidance,
} from './core/answer/problems.js';
export type {
  CompletedRecord,
  InProgressRecord,
  OperationMode,
  OperationRecord,
  RecordState,
  TombstoneRecord,
  UnknownRecord,
} from './core/record.js';
export { REPLAYED_HEADER, type HandlerReply, type HeaderValue, type Reply } from './core/answer/reply.js';
export {
  invalid,
  valid,
  type AtomicContext,
  type AtomicRoute,
  type RouteDefinition,
  type RouteEvent,
  type RouteRefusal,
  type TransparentFailure,
  type TransparentRoute,
  type Validation,
} from './core/route.js';
export type { AttemptEnd, Observer, RetrysafeEvent, RetrysafeEventOf } from './core/events.js';
export type { Tracing } from './core/tracing.js';
export { idempotent, type IdempotentOptions, type IdempotentOutcome } from './modes/idempotent.js';
export type { RetentionSetting, RouteSettings } from './core/route-settings.js';
export type { BackoffOptions } from './client/backoff.js';
export type { BoundStatement, Opened, SqlClient, SqlDatabase, Statement } from './store/sql-client.js';
export type { ReplayCacheOptions } from './store/replay-cache.js';
export type { ActivityOptions } from './background/activity-recorder.js';
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
// The store seams, for a store of one's own (its contract suite is `retrysafe/testing`) and for decorators.
export { type Clock, systemClock, type TimerHandle } from './core/clock.js';
export { defaultRetention, type Retention } from './core/retention.js';
export type { RouteSpecification } from './core/specification/route-specification.js';
export {
  openApiDocument,
  openApiPathItem,
  type OpenApiObject,
  type OpenApiValue,
} from './core/specification/openapi.js';
export { specificationPage } from './html/specification-page.js';
export type { PublishedSpecification, SpecificationRegistry } from './modes/published-specification.js';
export type { Completion } from './core/completion.js';
export type { AtomicClaim, AtomicStore, AtomicTransaction, ClaimRequest, Settlement } from './store/atomic-store.js';
export type {
  ExpiredLease,
  ExpiredLeases,
  Failure,
  Lease,
  LeaseClaim,
  LeaseClaims,
  LeasedWrites,
  LeaseRenewal,
  LeaseRequest,
  LeaseStore,
  Owned,
  Release,
  StepProgress,
} from './store/lease-store.js';
export type { UnknownActions } from './store/operator-store.js';
export type { RecordReader } from './store/record-reader.js';
export type { OperationStore } from './store/operation-store.js';
