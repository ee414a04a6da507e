export { downstreamKey } from '../modes/downstream-key.js';
export { runWithLease, type LeaseRun } from '../modes/run-with-lease.js';
export type {
  LeasedContext,
  LeasedOperation,
  LeasedRoute,
  Reconciliation,
  StepCall,
  StepOptions,
} from '../modes/leased-route.js';
export { RecoveryWorker, type RecoveryReport, type RecoveryWorkerOptions } from './recovery-worker.js';
export { resolveOperation, type Resolution, type ResolveResult } from './resolve.js';
export { retryOperation, type RetryResult } from './retry.js';
export { runLeased } from '../modes/run-leased.js';
