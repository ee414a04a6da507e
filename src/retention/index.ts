export {
  type PruneOutcome,
  type PruneTask,
  type SweepFailure,
  type SweepProgress,
  type SweepReport,
  type SweepStep,
  Sweeper,
  type SweeperOptions,
} from './sweeper.js';
export type { MaintenanceStore, SweepBatch } from '../store/maintenance-store.js';
