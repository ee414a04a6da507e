import type { OperationStore } from '../store/operation-store.js';
import type { AtomicClaim, ClaimRequest } from '../store/atomic-store.js';
import type { Completion } from '../core/completion.js';
import type { SqlClient, SqlDatabase } from '../store/sql-client.js';
import { leaseStore } from './lease-store.js';
import { recordReader } from './record-reader.js';
import { completionValues } from './sql/completion.js';
import { CLAIM_ATOMIC, claimAtomicValues, READ_RECORD } from './sql/claim-atomic.js';
import { COMPLETE_ATOMIC } from './sql/complete-atomic.js';
import { ids, type RecordRow, toRecord } from './sql/record-row.js';
import { LOCK_NOT_AVAILABLE, sqlState } from './sqlstate.js';
import { handlerPart, inTransaction, storePart } from './transaction.js';

/** The operation store on PostgreSQL (any server from 14 up, or PGlite). */
export function postgresStore<Tx>(database: SqlDatabase<Tx>): OperationStore<Tx> {
  return {
    ...leaseStore(database),
    ...recordReader(database),
    transactionTimeoutMs: database.transactionTimeoutMs,
    atomic(request, work) {
      return inTransaction(database, async (sql, tx) => {
        const claim = await storePart(() => claimAtomic(sql, request));
        return handlerPart(() => work({ claim, tx, complete: (completion) => storePart(() => completeAtomic(sql, request, completion)) }));
      });
    },
    transaction(work) {
      return inTransaction(database, (_sql, tx) => handlerPart(async () => ({ commit: true, value: await work(tx) })));
    },
  };
}

async function claimAtomic(sql: SqlClient, request: ClaimRequest): Promise<AtomicClaim> {
  let rows: { claimed: boolean; waited: boolean | null }[];
  try {
    ({ rows } = await sql.query<{ claimed: boolean; waited: boolean | null }>(CLAIM_ATOMIC, claimAtomicValues(request)));
  } catch (error) {
    if (sqlState(error) === LOCK_NOT_AVAILABLE) return { kind: 'busy' };
    throw error;
  }
  if (rows[0]?.claimed === true) return { kind: 'claimed' };
  // A committed record holds the identity; the claim may have waited for it, so only a new statement's snapshot sees it.
  const [found] = (await sql.query<RecordRow>(READ_RECORD, ids(request.identity))).rows;
  if (found === undefined) throw new Error('The conflicting operation record vanished; it was rolled back or pruned meanwhile.');
  return { kind: 'existing', record: toRecord(request.identity, found), waited: rows[0]?.waited === true };
}

async function completeAtomic(sql: SqlClient, request: ClaimRequest, completion: Completion): Promise<void> {
  await sql.query(COMPLETE_ATOMIC, [...ids(request.identity), ...completionValues(completion)]);
}
