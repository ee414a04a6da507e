import { RetrysafeError } from '../core/errors.js';
import type { ActivityCount, ActivityKind, ActivityStore } from '../store/activity-store.js';
import type { SqlDatabase } from '../store/sql-client.js';
import { ACTIVITY_SINCE, ADD_ACTIVITY, PRUNE_ACTIVITY } from './sql/activity.js';
import { pruneBatch, storeRows } from './store-rows.js';

interface ActivityRow {
  readonly hour: Date;
  readonly operation: string;
  readonly kind: ActivityKind;
  readonly n: number;
}

/** The hourly activity counts on PostgreSQL and PGlite; each call is one statement outside any transaction. */
export function activityStore<Tx>(database: SqlDatabase<Tx>): ActivityStore {
  return {
    async addActivity(counts) {
      if (counts.length === 0) return;
      await storeRows(database, ADD_ACTIVITY, [
        counts.map((c) => c.hour.toISOString()),
        counts.map((c) => c.operation),
        counts.map((c) => c.kind),
        counts.map((c) => c.n),
      ]);
    },
    async activity(hours) {
      if (!Number.isInteger(hours) || hours < 1 || hours > 24 * 366)
        throw new RetrysafeError('misuse', `Activity is read for 1 to ${24 * 366} hours, got ${hours}.`);
      const rows = await storeRows<ActivityRow>(database, ACTIVITY_SINCE, [hours]);
      return rows.map((row): ActivityCount => ({ hour: row.hour, operation: row.operation, kind: row.kind, n: row.n }));
    },
    pruneActivity: (olderThanSeconds, limit) => pruneBatch(database, PRUNE_ACTIVITY, olderThanSeconds, limit),
  };
}
