export { type CollectableMetric, type RegistryLike } from './exposed-metric.js';
export { type LogEntry, type LogFields, logFields, type LogLevel } from './log-fields.js';
export { type LoggerLike, logObserver, type LogObserverOptions } from './log-observer.js';
export { defaultLockWaitBuckets, metricsObserver, type MetricsOptions } from './metrics.js';
export { collectStoreGauges, type OutboxBacklogLike, type StoreGaugesOptions } from './store-gauges.js';
export { defaultStoreBuckets, type StoreTimer, storeTimer, type TimedStoreOptions } from './timed-store.js';
export { type ActivityOptions, ActivityRecorder } from '../background/activity-recorder.js';
export { DIAGNOSTICS_PREFIX, diagnosticsChannel } from '../core/diagnostics.js';
export type { MaintenanceStore, StoreStats } from '../store/maintenance-store.js';
