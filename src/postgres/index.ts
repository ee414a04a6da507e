export {
  type FromPgOptions,
  fromPg,
  type PgClientLike,
  type PgPoolClient,
  type PgPoolLike,
} from './clients/from-pg.js';
export { fromPGlite, type PGliteLike } from './clients/from-pglite.js';
export { migrate, type MigrationResult } from './migrate.js';
export {
  checkDistribution,
  distribute,
  type DistributeOptions,
  type DistributionResult,
  distributionSql,
} from './distribute.js';
export type { Migration } from './migrations/index.js';
export { schemaSql } from './schema.js';
export { maintenanceStore } from './postgres-maintenance-store.js';
export { postgresOperatorTools } from './postgres-operator-tools.js';
export type { ActionConfig, OperatorTools, StoreHealth } from '../operator/operator-tools.js';
export { activityStore } from './postgres-activity-store.js';
export type { ActivityCount, ActivityKind, ActivityStore } from '../store/activity-store.js';
export type {
  MaintenanceStore,
  OperationDetails,
  SweepBatch,
  StepSummary,
  StoreStats,
  StuckOperation,
  StuckQuery,
} from '../store/maintenance-store.js';
export { postgresStore } from './postgres-store.js';
export type { OperationStore } from '../store/operation-store.js';
export {
  type BoundStatement,
  type Opened,
  portable,
  type SqlClient,
  type SqlDatabase,
  type Statement,
} from '../store/sql-client.js';
