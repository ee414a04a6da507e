import { RetrysafeError } from '../core/errors.js';
import type { AtomicClaim, AtomicTransaction, ClaimRequest, Completion, OperationStore, Settlement } from '../store/operation-store.js';
import type { SqlClient, SqlDatabase } from '../store/sql-client.js';
import { CLAIM_ATOMIC, READ_RECORD } from './sql/claim-atomic.js';
import { COMPLETE_ATOMIC } from './sql/complete-atomic.js';
import { type RecordRow, toRecord } from './sql/record-row.js';
import { isTransientDatabaseError, LOCK_NOT_AVAILABLE, sqlState } from './sqlstate.js';

/** Marks an error raised by retrysafe's own statements, so it is not mistaken for the handler's. */
class StoreFailure extends Error {}

/** Carries what `work` threw through the driver's rollback, to be told apart from BEGIN or COMMIT failing. */
class WorkFailure extends Error {}

/** Carries `work`'s value out of a transaction that must roll back. */
class Rollback<T> extends Error {
  constructor(readonly value: T) {
    super('rollback');
  }
}

/** The operation store on PostgreSQL (any server from 14 up, or PGlite). */
export function postgresStore<Tx>(database: SqlDatabase<Tx>): OperationStore<Tx> {
  return {
    atomic<T>(request: ClaimRequest, work: (transaction: AtomicTransaction<Tx>) => Promise<Settlement<T>>): Promise<T> {
      return inTransaction(database, async (sql, tx) => {
        const claim = await ours(() => claimAtomic(sql, request));
        return guardWork(() =>
          work({ claim, tx, complete: (completion) => ours(() => completeAtomic(sql, request, completion)) }),
        );
      });
    },
    transaction<T>(work: (tx: Tx) => Promise<T>): Promise<T> {
      return inTransaction(database, (_sql, tx) => guardWork(async () => ({ commit: true, value: await work(tx) })));
    },
  };
}

/** Runs `body` in a transaction and sorts its failures into the store's and the handler's. */
async function inTransaction<Tx, T>(database: SqlDatabase<Tx>, body: (sql: SqlClient, tx: Tx) => Promise<Settlement<T>>): Promise<T> {
  try {
    return await database.transaction(async (sql, tx) => {
      const settlement = await body(sql, tx);
      if (!settlement.commit) throw new Rollback(settlement.value);
      return settlement.value;
    });
  } catch (error) {
    if (error instanceof Rollback) return (error as Rollback<T>).value;
    // The handler's statements run on our connection: losing it is the store's failure too.
    if (error instanceof WorkFailure) throw isTransientDatabaseError(error.cause) ? unavailable(error.cause) : error.cause;
    // Our statements, BEGIN, COMMIT or the connection itself.
    throw unavailable(error);
  }
}

function guardWork<T>(work: () => Promise<Settlement<T>>): Promise<Settlement<T>> {
  return work().catch((error: unknown) => {
    throw error instanceof StoreFailure ? error : new WorkFailure('work failed', { cause: error });
  });
}

async function claimAtomic(sql: SqlClient, request: ClaimRequest): Promise<AtomicClaim> {
  const { tenant, operation, key } = request.identity;
  let rows: RecordRow[];
  try {
    ({ rows } = await sql.query<RecordRow & { claimed: boolean }>(CLAIM_ATOMIC, [tenant, operation, key, request.fingerprint, `${request.lockTimeoutMs}ms`]));
  } catch (error) {
    if (sqlState(error) === LOCK_NOT_AVAILABLE) return { kind: 'busy' };
    throw error;
  }
  const [row] = rows as (RecordRow & { claimed: boolean })[];
  if (row?.claimed) return { kind: 'claimed' };
  if (row !== undefined) return { kind: 'existing', record: toRecord(request.identity, row) };
  // The winner committed after this statement's snapshot: a new statement sees it.
  const reread = await sql.query<RecordRow>(READ_RECORD, [tenant, operation, key]);
  const [found] = reread.rows;
  if (found === undefined) throw new Error('The conflicting operation record vanished; it was rolled back or pruned meanwhile.');
  return { kind: 'existing', record: toRecord(request.identity, found) };
}

async function completeAtomic(sql: SqlClient, request: ClaimRequest, completion: Completion): Promise<void> {
  const { tenant, operation, key } = request.identity;
  const { reply, retention } = completion;
  await sql.query(COMPLETE_ATOMIC, [
    tenant,
    operation,
    key,
    completion.state,
    reply.status,
    JSON.stringify(reply.headers),
    reply.body,
    reply.headers.location ?? null,
    retention.responseSeconds,
    retention.tombstoneSeconds,
  ]);
}

async function ours<T>(statement: () => Promise<T>): Promise<T> {
  try {
    return await statement();
  } catch (error) {
    throw new StoreFailure('store statement failed', { cause: error });
  }
}

function unavailable(error: unknown): RetrysafeError {
  if (error instanceof RetrysafeError) return error;
  const cause = error instanceof StoreFailure ? error.cause : error;
  return new RetrysafeError('store-unavailable', 'The operation store failed.', { cause });
}
