export {
  type PruneOutcome,
  type PruneTask,
  type SweepProgress,
  type SweepReport,
  Sweeper,
  type SweeperOptions,
} from './sweeper.js';
export type { MaintenanceStore } from '../store/maintenance-store.js';
