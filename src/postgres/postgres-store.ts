import { systemClock } from '../core/clock.js';
import type { OperationIdentity } from '../core/identity.js';
import type { OperationRecord } from '../core/record.js';
import type { AtomicClaim, AtomicTransaction, ClaimRequest, Settlement } from '../store/atomic-store.js';
import type { OperationStore } from '../store/operation-store.js';
import type { Opened, SqlClient, SqlDatabase } from '../store/sql-client.js';
import { activityStore } from './postgres-activity-store.js';
import { leaseStore } from './postgres-lease-store.js';
import { unknownActions } from './postgres-operator-store.js';
import { recordReader } from './postgres-record-reader.js';
import { CLAIM_ATOMIC, claimAtomicValues } from './sql/claim-atomic.js';
import { COMPLETE_ATOMIC, completeAtomicValues } from './sql/complete-atomic.js';
import { IN_FAILED_SQL_TRANSACTION, sqlState, UNIQUE_VIOLATION } from './sqlstate.js';
import { DuplicateWait } from './duplicate-wait.js';
import { handlerPart, inTransaction, plainTransaction, storePart, unavailable } from './transaction.js';

/** The operation store on PostgreSQL (any server from 14 up, or PGlite). */
export function postgresStore<Tx>(database: SqlDatabase<Tx>): OperationStore<Tx> {
  const duplicates = new DuplicateWait();
  return {
    transactionTimeoutMs: database.transactionTimeoutMs,
    atomic: (request, work, taken) => atomicTransaction(database, duplicates, request, work, taken),
    transaction: (work) => plainTransaction(database, work),
    ...leaseStore(database),
    ...recordReader(database),
    ...unknownActions(database),
    activityCounts: activityStore(database),
  };
}

/**
 * What one try of an atomic transaction came to: the work's value; the
 * identity taken by a record its final INSERT met; or held by a running
 * attempt, the transaction rolled back before the work ran.
 */
type Ending<T> =
  { readonly kind: 'settled'; readonly value: T } | { readonly kind: 'taken' } | { readonly kind: 'held' };

/**
 * Tries the claim until it is this attempt's, a record answers, or the lock
 * wait is over (then the claim is `busy`). Between two tries the duplicate
 * holds no connection (`DuplicateWait`).
 */
async function atomicTransaction<Tx, T>(
  database: SqlDatabase<Tx>,
  duplicates: DuplicateWait,
  request: ClaimRequest,
  work: (transaction: AtomicTransaction<Tx>) => Promise<Settlement<T>>,
  taken: (record: OperationRecord) => T,
): Promise<T> {
  const { clock = systemClock } = request;
  const deadline = clock.monotonic() + request.lockTimeoutMs;
  for (let pause = 0; ; pause += 1) {
    const ending = await tryClaim(database, duplicates, request, work, {
      waited: pause > 0,
      last: clock.monotonic() >= deadline,
    });
    if (ending.kind === 'settled') return ending.value;
    if (ending.kind === 'taken') return taken(await holder(database, request.identity));
    await duplicates.pause(request.identity, pause, deadline, clock);
  }
}

/** Whether an earlier try found the identity held, and whether this is the last try before the claim is busy. */
interface Try {
  readonly waited: boolean;
  readonly last: boolean;
}

/**
 * BEGIN, the claim (the lock tried, and whether a record holds the identity)
 * as the opening statement, the work, the record's INSERT, COMMIT. A driver
 * that can sends the claim with BEGIN, and the INSERT with COMMIT
 * (`SqlClient.withCommit`): its outcome is read after the transaction, and a
 * failed INSERT means COMMIT rolled back.
 */
async function tryClaim<Tx, T>(
  database: SqlDatabase<Tx>,
  duplicates: DuplicateWait,
  request: ClaimRequest,
  work: (transaction: AtomicTransaction<Tx>) => Promise<Settlement<T>>,
  attempt: Try,
): Promise<Ending<T>> {
  let withCommit: Promise<boolean> | undefined;
  let release: (() => void) | undefined;
  const opening = { statement: CLAIM_ATOMIC, values: claimAtomicValues(request) };
  try {
    const ending = await inTransaction<Tx, Ending<T>>(database, opening, async (sql, tx, opened) => {
      const found = await storePart(() => claimFrom(sql, request, opened, attempt.waited));
      if (found === 'held' && !attempt.last) return { commit: false, value: { kind: 'held' } };
      const claim: AtomicClaim = found === 'held' ? { kind: 'busy' } : found;
      if (claim.kind === 'claimed') release = duplicates.hold(request.identity);
      const settlement = await handlerPart(() => work({ claim, tx }));
      const settled = { commit: settlement.commit, value: { kind: 'settled', value: settlement.value } } as const;
      if (!settlement.commit) return settled;
      const values = completeAtomicValues(request, settlement.completion);
      if (sql.withCommit !== undefined) {
        const lost = lostTheIdentity(sql.withCommit(COMPLETE_ATOMIC, values));
        withCommit = lost;
        // Read after the transaction; marked handled here for when COMMIT fails first and it is never read.
        lost.catch(() => undefined);
        return settled;
      }
      const lost = await storePart(() => lostTheIdentity(sql.query(COMPLETE_ATOMIC, values)));
      return lost ? { commit: false, value: { kind: 'taken' } } : settled;
    }).catch(async (error: unknown) => {
      if (withCommit !== undefined) {
        const insert = await withCommit.then(
          (lost) => ({ lost }),
          (failure: unknown) => ({ lost: false, failure }),
        );
        // A driver that saw the INSERT fail before sending COMMIT rolls back and throws: the identity may still be taken.
        if (insert.lost) return { kind: 'taken' } as const;
        // Or the INSERT was refused because the handler caught a failed statement of its own, which a driver may report
        // in its place (postgres.js): the aborted transaction is what happened.
        if ('failure' in insert && sqlState(insert.failure) === IN_FAILED_SQL_TRANSACTION)
          throw unavailable(insert.failure);
      }
      throw error;
    });
    const lost =
      withCommit === undefined ? false : await withCommit.catch((error: unknown) => Promise.reject(unavailable(error)));
    return lost ? { kind: 'taken' } : ending;
  } finally {
    release?.();
  }
}

/** Whether the record's INSERT failed on the primary key: a record holds the identity. Any other failure is thrown. */
function lostTheIdentity(insert: Promise<unknown>): Promise<boolean> {
  return insert.then(
    () => false,
    (error: unknown) => {
      if (sqlState(error) === UNIQUE_VIOLATION) return true;
      throw error;
    },
  );
}

/** The claim's row: whether the lock was free and is now this transaction's, and whether a record holds the identity. */
interface ClaimRow {
  readonly locked: boolean;
  readonly found: boolean;
}

/**
 * The claim from the opening statement's row, or `held`: another attempt
 * holds the lock and no record answers yet. A record found is read in a
 * statement of its own; a committed record is final (a completed one only
 * ever becomes a tombstone), so it answers whoever holds the lock. The
 * sweeper prunes without the lock, so the record may be gone by then: the
 * identity is then free if the lock is this transaction's, and the record's
 * INSERT still decides.
 */
async function claimFrom(
  sql: SqlClient,
  request: ClaimRequest,
  opened: Opened,
  waited: boolean,
): Promise<AtomicClaim | 'held'> {
  if ('error' in opened) throw opened.error;
  const [row] = opened.rows as ClaimRow[];
  if (row === undefined) throw new Error('The atomic claim returned no row.');
  if (row.found) {
    const record = await recordReader(sql).read(request.identity);
    if (record !== undefined) return { kind: 'existing', record, waited };
  }
  return row.locked ? { kind: 'claimed' } : 'held';
}

/** The record that took the identity from an attempt whose INSERT lost, read after the rollback. */
async function holder(
  database: Pick<SqlDatabase<unknown>, 'query'>,
  identity: OperationIdentity,
): Promise<OperationRecord> {
  const found = await recordReader(database).read(identity);
  if (found === undefined)
    throw unavailable(
      new Error(
        'No record holds the identity after a unique violation: it was pruned meanwhile, or the violation was of a deferred constraint at COMMIT.',
      ),
    );
  return found;
}
