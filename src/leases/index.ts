export { downstreamKey } from './downstream-key.js';
export { executeLease, type LeaseRun } from './execute-lease.js';
export type { LeasedContext, LeasedOperation, LeasedRoute, Reconciliation, StepCall, StepOptions } from './leased-route.js';
export { RecoveryWorker, type RecoveryReport, type RecoveryWorkerOptions } from './recovery-worker.js';
export { resolveOperation, type Resolution, type ResolveResult } from './resolve.js';
export { retryOperation, type RetryResult } from './retry.js';
export { runLeased } from './run-leased.js';
