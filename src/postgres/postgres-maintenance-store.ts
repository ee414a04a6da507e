import { RetrysafeError } from '../core/errors.js';
import type { OperationIdentity } from '../core/identity.js';
import type { OperationMode, RecordState } from '../core/record.js';
import type { MaintenanceStore, OperationDetails, StuckOperation, SweepBatch } from '../store/maintenance-store.js';
import type { SqlDatabase } from '../store/sql-client.js';
import { STORE_STATS, STUCK_OPERATIONS, UNHANDLED_LEASES } from './sql/inspect.js';
import { DELETE_EXPIRED_TOMBSTONES, TOMBSTONE_EXPIRED } from './sql/sweep.js';
import { refusedShape, storeRows } from './store-rows.js';
import { unavailable } from './transaction.js';
import { activityStore } from './postgres-activity-store.js';
import { readOperation } from './postgres-operator-store.js';

interface DetailsRow {
  readonly state: RecordState;
  readonly mode: OperationMode;
  readonly fingerprint: Uint8Array;
  readonly created_at: Date;
  readonly finished_at: Date | null;
  readonly attempt: number;
  readonly fencing_token: number;
  readonly owner_token: string | null;
  readonly lease_expires_at: Date | null;
  readonly response_status: number | null;
  readonly response_headers: Record<string, string | string[]> | null;
  readonly resource_ref: string | null;
  readonly reason: string | null;
  readonly response_omitted: boolean;
  readonly body_bytes: number | null;
  readonly response_body: Uint8Array | null;
  readonly response_expires_at: Date | null;
  readonly expires_at: Date | null;
}

interface StuckRow {
  readonly tenant: string;
  readonly operation: string;
  readonly key: string;
  readonly kind: StuckOperation['kind'];
  readonly mode: OperationMode;
  readonly attempt: number;
  readonly created_at: Date;
  readonly lease_expires_at: Date | null;
  readonly reason: string | null;
  readonly failures: number;
  readonly not_before: Date | null;
  readonly last_error: string | null;
  readonly age_seconds: number;
}

interface StatsRow {
  readonly oldest_in_progress_seconds: number | null;
  readonly unknown_operations: number;
  readonly expired_leases: number;
  readonly parked_webhook_events: number;
}

/** Retention and operator statements on PostgreSQL: each call one statement, a sweep batch in a transaction of its own. */
export function maintenanceStore<Tx>(database: SqlDatabase<Tx>): MaintenanceStore {
  const activity = activityStore(database);
  const run = <Row>(text: string, values: readonly unknown[]): Promise<Row[]> => storeRows<Row>(database, text, values);
  const sweep = async (text: string, limit: number, from = '{-infinity}'): Promise<SweepBatch> => {
    const values = [batchLimit(limit), from];
    const [row] = await database
      .transaction(async (sql) => {
        await sql.query(WITHOUT_JIT);
        return (await sql.query<{ n: number; resume: string | null }>(text, values)).rows;
      })
      .catch((error: unknown) => unsupportedSweep(unavailable(error)));
    return { changed: row?.n ?? 0, resume: row?.resume ?? undefined };
  };

  return {
    tombstoneExpired: (limit, from) => sweep(TOMBSTONE_EXPIRED, limit, from),
    deleteExpiredTombstones: (limit, from) => sweep(DELETE_EXPIRED_TOMBSTONES, limit, from),
    pruneActivity: (olderThanSeconds, limit) => activity.pruneActivity(olderThanSeconds, batchLimit(limit)),
    async stats() {
      const [row] = await run<StatsRow>(STORE_STATS, []);
      return {
        oldestInProgressSeconds: row?.oldest_in_progress_seconds ?? undefined,
        unknownOperations: row?.unknown_operations ?? 0,
        expiredLeases: row?.expired_leases ?? 0,
        parkedWebhookEvents: row?.parked_webhook_events ?? 0,
      };
    },
    // Deprecated: the operator seam's read, in the shape inspect has always answered.
    async inspect(identity, options = {}) {
      const found = await readOperation(database, identity, options.body === true);
      if (found === undefined) return undefined;
      const { row, steps } = found;
      return toDetails(
        identity,
        row,
        steps.map((s) => ({
          name: s.step,
          startedAt: s.started_at,
          finishedAt: s.finished_at ?? undefined,
          fencingToken: s.fencing_token,
        })),
      );
    },
    async stuck(query) {
      const rows = await run<StuckRow>(STUCK_OPERATIONS, [query.olderThanSeconds, batchLimit(query.limit)]);
      return rows.map((row) => ({
        identity: { tenant: row.tenant, operation: row.operation, key: row.key },
        kind: row.kind,
        mode: row.mode,
        attempt: row.attempt,
        createdAt: row.created_at,
        ageSeconds: row.age_seconds,
        leaseExpiresAt: row.lease_expires_at ?? undefined,
        reason: row.reason ?? undefined,
        failures: row.failures,
        nextAttemptAt: row.not_before ?? undefined,
        lastError: row.last_error ?? undefined,
      }));
    },
    async unhandledLeases(handled) {
      const rows = await run<{ operation: string; n: number }>(UNHANDLED_LEASES, [handled]);
      return Object.fromEntries(rows.map((row) => [row.operation, row.n]));
    },
  };
}

function toDetails(identity: OperationIdentity, row: DetailsRow, steps: OperationDetails['steps']): OperationDetails {
  return {
    identity,
    state: row.state,
    mode: row.mode,
    fingerprint: row.fingerprint,
    createdAt: row.created_at,
    finishedAt: row.finished_at ?? undefined,
    attempt: row.attempt,
    fencingToken: row.fencing_token,
    leaseOwner: row.owner_token ?? undefined,
    leaseExpiresAt: row.lease_expires_at ?? undefined,
    status: row.response_status ?? undefined,
    headers: row.response_headers ?? undefined,
    resource: row.resource_ref ?? undefined,
    reason: row.reason ?? undefined,
    responseOmitted: row.response_omitted,
    bodyBytes: row.body_bytes ?? undefined,
    body: row.response_body ?? undefined,
    responseExpiresAt: row.response_expires_at ?? undefined,
    expiresAt: row.expires_at ?? undefined,
    steps,
  };
}

/**
 * A sweep batch's statement is long, and on a table of millions of rows the
 * planner's estimates put it past `jit_above_cost`: PostgreSQL then compiled
 * it to machine code on every batch, about 140 ms of CPU against about 20 ms
 * of work at ten million records. Its plan is a walk of a few hundred index
 * entries, which compiled code does not make faster, so each batch runs in a
 * transaction of its own with JIT off.
 */
const WITHOUT_JIT = 'SET LOCAL jit = off';

/** The sweep on Citus, with retrysafe_operations distributed. */
const unsupportedSweep = refusedShape(
  'The sweeper',
  'its batches lock the due records with FOR UPDATE SKIP LOCKED and reach them again by ctid, which Citus does not run on a distributed retrysafe_operations. See docs/scaling.md.',
);

function batchLimit(limit: number): number {
  if (!Number.isInteger(limit) || limit < 1)
    throw new RetrysafeError('misuse', `A batch size must be a positive whole number, got ${limit}.`);
  return limit;
}
