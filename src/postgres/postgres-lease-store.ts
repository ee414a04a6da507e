import { RetrysafeError } from '../core/errors.js';
import type { OperationIdentity } from '../core/identity.js';
import type { OperationMode } from '../core/record.js';
import type { Lease, LeaseStore, Owned, StepProgress } from '../store/lease-store.js';
import type { SqlDatabase, Statement } from '../store/sql-client.js';
import { handlerPart, inTransaction, storePart, type TransactionSettlement } from './transaction.js';
import {
  ABANDON,
  abandonValues,
  CHECKPOINT,
  checkpointValues,
  CLAIM_LEASE,
  claimLeaseValues,
  COMPLETE_LEASE,
  completeLeaseValues,
  EXPIRED_LEASES,
  expiredLeasesValues,
  LOCK_OWNED,
  lockOwnedValues,
  MARK_UNKNOWN,
  markUnknownValues,
  READ_STEPS,
  readStepsValues,
  RELEASE,
  releaseValues,
  RENEW,
  renewValues,
  START_STEP,
  startStepValues,
  TAKE_OVER,
  takeOverValues,
} from './sql/lease.js';
import { type RecordRow, toRecord } from './sql/record-row.js';
import { recordReader } from './postgres-record-reader.js';
import { storeChanged, storeRows } from './store-rows.js';

interface LeaseRow {
  readonly owner_token: string;
  readonly fencing_token: number;
  readonly attempt: number;
  readonly input: unknown;
  readonly failures: number;
  readonly age_seconds: number;
}

/** Leased mode on PostgreSQL. Each method is one statement in its own transaction, except `checkpointWith`. */
export function leaseStore<Tx>(database: SqlDatabase<Tx>): LeaseStore<Tx> {
  const run = <Row>(text: Statement, values: readonly unknown[]): Promise<Row[]> =>
    storeRows<Row>(database, text, values);
  const changed = (text: Statement, values: readonly unknown[]): Promise<boolean> =>
    storeChanged(database, text, values);
  const reader = recordReader(database);

  return {
    async claimLease(request) {
      const [row] = await run<RecordRow & { claimed: boolean }>(CLAIM_LEASE, claimLeaseValues(request));
      if (row?.claimed) {
        const lease = {
          identity: request.identity,
          ownerToken: request.ownerToken,
          fencingToken: row.fencing_token,
          attempt: row.attempt,
          input: request.input,
          failures: 0,
          ageSeconds: 0,
          leaseSeconds: request.leaseSeconds,
        };
        return { kind: 'claimed', lease };
      }
      if (row !== undefined) return { kind: 'existing', record: toRecord(request.identity, row) };
      // Another claim committed after this statement's snapshot: read it in a new one.
      const found = await reader.read(request.identity);
      if (found === undefined)
        throw new RetrysafeError('store-unavailable', 'The conflicting operation record vanished meanwhile; retry.');
      return { kind: 'existing', record: found };
    },
    async takeOver(identity, seenFencingToken, ownerToken, leaseSeconds) {
      const [row] = await run<LeaseRow>(
        TAKE_OVER,
        takeOverValues(identity, seenFencingToken, ownerToken, leaseSeconds),
      );
      return row === undefined ? undefined : toLease(identity, row, leaseSeconds);
    },
    renew: (lease) => changed(RENEW, renewValues(lease)),
    startStep: (lease, step) => changed(START_STEP, startStepValues(lease, step)),
    checkpoint: (lease, step, result) => changed(CHECKPOINT, checkpointValues(lease, step, result)),
    checkpointWith<T>(lease: Lease, step: string, work: (tx: Tx) => Promise<T>): Promise<Owned<T>> {
      return inTransaction(database, undefined, async (sql, tx): Promise<TransactionSettlement<Owned<T>>> => {
        const held = await storePart(() => sql.query(LOCK_OWNED, lockOwnedValues(lease)));
        if (held.rows.length === 0) return { commit: false, value: { owned: false } };
        const value = await handlerPart(() => work(tx));
        await storePart(() => sql.query(CHECKPOINT, checkpointValues(lease, step, value)));
        return { commit: true, value: { owned: true, value } };
      });
    },
    async steps(lease) {
      const rows = await run<{ step: string; result: unknown; finished: boolean }>(READ_STEPS, readStepsValues(lease));
      return new Map(
        rows.map((row): [string, StepProgress] => [
          row.step,
          row.finished ? { state: 'finished', result: row.result } : { state: 'started' },
        ]),
      );
    },
    completeLease: (lease, completion) => changed(COMPLETE_LEASE, completeLeaseValues(lease, completion)),
    abandon: (lease) => changed(ABANDON, abandonValues(lease)),
    release: (lease, release) => changed(RELEASE, releaseValues(lease, release)),
    markUnknown: (lease, reason, failure) => changed(MARK_UNKNOWN, markUnknownValues(lease, reason, failure)),
    async expiredLeases(limit, operations) {
      const rows = await run<{
        tenant: string;
        operation: string;
        key: string;
        fencing_token: number;
        mode: OperationMode;
      }>(EXPIRED_LEASES, expiredLeasesValues(limit, operations));
      return rows.map((row) => ({
        identity: { tenant: row.tenant, operation: row.operation, key: row.key },
        fencingToken: row.fencing_token,
        mode: row.mode,
      }));
    },
  };
}

function toLease(identity: OperationIdentity, row: LeaseRow, leaseSeconds: number): Lease {
  return {
    identity,
    ownerToken: row.owner_token,
    fencingToken: row.fencing_token,
    attempt: row.attempt,
    input: row.input,
    failures: row.failures,
    ageSeconds: row.age_seconds,
    leaseSeconds,
  };
}
