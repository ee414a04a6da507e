import type { AtomicClaim, ClaimRequest, Completion, OperationStore } from '../store/operation-store.js';
import type { SqlClient, SqlDatabase } from '../store/sql-client.js';
import { ids, leaseStore } from './lease-store.js';
import { outcomeValues } from './sql/outcome.js';
import { CLAIM_ATOMIC, READ_RECORD } from './sql/claim-atomic.js';
import { COMPLETE_ATOMIC } from './sql/complete-atomic.js';
import { type RecordRow, toRecord } from './sql/record-row.js';
import { LOCK_NOT_AVAILABLE, sqlState } from './sqlstate.js';
import { handlerPart, inTransaction, storePart } from './transaction.js';

/** The operation store on PostgreSQL (any server from 14 up, or PGlite). */
export function postgresStore<Tx>(database: SqlDatabase<Tx>): OperationStore<Tx> {
  return {
    ...leaseStore(database),
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
  let rows: (RecordRow & { claimed: boolean })[];
  try {
    const { retention } = request;
    const values = [...ids(request.identity), request.fingerprint, `${request.lockTimeoutMs}ms`, retention?.responseSeconds ?? null, retention?.tombstoneSeconds ?? null];
    ({ rows } = await sql.query<RecordRow & { claimed: boolean }>(CLAIM_ATOMIC, values));
  } catch (error) {
    if (sqlState(error) === LOCK_NOT_AVAILABLE) return { kind: 'busy' };
    throw error;
  }
  const [row] = rows;
  if (row?.claimed) return { kind: 'claimed' };
  if (row !== undefined) return { kind: 'existing', record: toRecord(request.identity, row) };
  // The winner committed after this statement's snapshot: a new statement sees it.
  const [found] = (await sql.query<RecordRow>(READ_RECORD, ids(request.identity))).rows;
  if (found === undefined) throw new Error('The conflicting operation record vanished; it was rolled back or pruned meanwhile.');
  return { kind: 'existing', record: toRecord(request.identity, found) };
}

async function completeAtomic(sql: SqlClient, request: ClaimRequest, completion: Completion): Promise<void> {
  await sql.query(COMPLETE_ATOMIC, [...ids(request.identity), ...outcomeValues(completion)]);
}
