import type { Completion } from '../core/completion.js';
import type { OperationIdentity } from '../core/identity.js';
import type { OperationRecord } from '../core/record.js';
import type { AtomicClaim, AtomicTransaction, ClaimRequest, Settlement } from '../store/atomic-store.js';
import type { OperationStore } from '../store/operation-store.js';
import type { Opened, SqlClient, SqlDatabase } from '../store/sql-client.js';
import { leaseStore } from './lease-store.js';
import { recordReader } from './record-reader.js';
import { CLAIM_ATOMIC, claimAtomicValues } from './sql/claim-atomic.js';
import { COMPLETE_ATOMIC, completeAtomicValues } from './sql/complete-atomic.js';
import { LOCK_NOT_AVAILABLE, sqlState, UNIQUE_VIOLATION } from './sqlstate.js';
import { handlerPart, inTransaction, plainTransaction, storePart, unavailable } from './transaction.js';

/** The operation store on PostgreSQL (any server from 14 up, or PGlite). */
export function postgresStore<Tx>(database: SqlDatabase<Tx>): OperationStore<Tx> {
  return {
    transactionTimeoutMs: database.transactionTimeoutMs,
    atomic: (request, work, taken) => atomicTransaction(database, request, work, taken),
    transaction: (work) => plainTransaction(database, work),
    ...leaseStore(database),
    ...recordReader(database),
  };
}

/** What an atomic transaction came to: the work's value, or the identity taken by a record its final INSERT met. */
type Ending<T> = { readonly kind: 'settled'; readonly value: T } | { readonly kind: 'taken' };

/**
 * BEGIN, the claim (the lock, and whether a record holds the identity) as the opening statement,
 * the work, the record's INSERT, COMMIT. A driver that can sends the claim
 * with BEGIN; with a pipelining driver the INSERT is left in flight so that
 * COMMIT goes with it, its outcome is read after the transaction, and a
 * failed INSERT means COMMIT rolled back.
 */
async function atomicTransaction<Tx, T>(
  database: SqlDatabase<Tx>,
  request: ClaimRequest,
  work: (transaction: AtomicTransaction<Tx>) => Promise<Settlement<T>>,
  taken: (record: OperationRecord) => T,
): Promise<T> {
  let withCommit: Promise<boolean> | undefined;
  const opening = { statement: CLAIM_ATOMIC, values: claimAtomicValues(request) };
  const ending = await inTransaction<Tx, Ending<T>>(database, opening, async (sql, tx, opened) => {
    const claim = await storePart(() => claimFrom(sql, request, opened));
    let completion: Completion | undefined;
    const complete = (outcome: Completion): Promise<void> => {
      completion = outcome;
      return Promise.resolve();
    };
    const settlement = await handlerPart(() => work({ claim, tx, complete }));
    const settled = { commit: settlement.commit, value: { kind: 'settled', value: settlement.value } } as const;
    if (!settlement.commit || completion === undefined) return settled;
    const lost = lostTheIdentity(sql.query(COMPLETE_ATOMIC, completeAtomicValues(request, completion)));
    if (sql.pipelined === true) {
      withCommit = lost;
      // Read after the transaction; marked handled here for when COMMIT fails first and it is never read.
      lost.catch(() => undefined);
      return settled;
    }
    return (await storePart(() => lost)) ? { commit: false, value: { kind: 'taken' } } : settled;
  }).catch(async (error: unknown) => {
    // A driver that saw the INSERT fail before sending COMMIT rolls back and throws: the identity may still be taken.
    if (withCommit !== undefined && (await withCommit.catch(() => false))) return { kind: 'taken' } as const;
    throw error;
  });
  const lost = withCommit === undefined ? false : await withCommit.catch((error: unknown) => Promise.reject(unavailable(error)));
  if (ending.kind === 'settled' && !lost) return ending.value;
  return taken(await holder(database, request.identity));
}

/** Whether the record's INSERT failed on the primary key: a record holds the identity. Any other failure is thrown. */
async function lostTheIdentity(insert: Promise<unknown>): Promise<boolean> {
  try {
    await insert;
    return false;
  } catch (error) {
    if (sqlState(error) === UNIQUE_VIOLATION) return true;
    throw error;
  }
}

/** The claim's row: whether it waited for the lock, and whether a record holds the identity. */
interface ClaimRow {
  readonly waited: boolean;
  readonly found: boolean;
}

/** The claim from what the opening statement came to: it failed on the lock wait, or its row says whether a record holds the identity. */
async function claimFrom(sql: SqlClient, request: ClaimRequest, opened: Opened): Promise<AtomicClaim> {
  if ('error' in opened) {
    if (sqlState(opened.error) === LOCK_NOT_AVAILABLE) return { kind: 'busy' };
    throw opened.error;
  }
  const [row] = opened.rows as ClaimRow[];
  if (row === undefined) throw new Error('The atomic claim returned no row.');
  if (!row.found) return { kind: 'claimed' };
  // Read under the lock, in a statement of its own: its snapshot holds what the holder committed. The sweeper prunes
  // without the lock, so the record may be gone by then: the identity is free, and the record's INSERT still decides.
  const record = await recordReader(sql).read(request.identity);
  return record === undefined ? { kind: 'claimed' } : { kind: 'existing', record, waited: row.waited };
}

/** The record that took the identity from an attempt whose INSERT lost, read after the rollback. */
async function holder(database: Pick<SqlDatabase<unknown>, 'query'>, identity: OperationIdentity): Promise<OperationRecord> {
  const found = await recordReader(database).read(identity);
  if (found === undefined) throw unavailable(new Error('The record that took the identity vanished; it was pruned meanwhile.'));
  return found;
}
