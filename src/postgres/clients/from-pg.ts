import { warnProcess } from '../../core/process-warning.js';
import {
  type BoundStatement,
  type Opened,
  open,
  openWith,
  type SqlClient,
  type SqlDatabase,
  type Statement,
} from '../../store/sql-client.js';
import { PREPARED_STATEMENT_ELSEWHERE, sqlState } from '../sqlstate.js';
import { BEGIN_READ_COMMITTED } from './read-committed.js';

/** The members of a node-postgres `PoolClient` that retrysafe calls. */
export interface PgClientLike {
  query(text: string | { name: string; text: string }, values?: unknown[]): Promise<{ rows: unknown[] }>;
  release(destroy?: boolean | Error): void;
  on(event: 'error', listener: (error: Error) => void): unknown;
  removeListener(event: 'error', listener: (error: Error) => void): unknown;
}

/** The members of a node-postgres `Pool` that retrysafe calls. */
export interface PgPoolLike<Client extends PgClientLike> {
  connect(): Promise<Client>;
  query(text: string | { name: string; text: string }, values?: unknown[]): Promise<{ rows: unknown[] }>;
  /** node-postgres emits `acquire` as it hands a client out, in the same turn, before `connect()` resolves. */
  on?(event: 'acquire', listener: (client: Client) => void): unknown;
}

export interface FromPgOptions {
  /**
   * Whether retrysafe's statements are named, so node-postgres prepares each
   * once per connection (default true). Set false behind a pooler in
   * transaction mode that does not carry prepared statements from one server
   * connection to the next (PgBouncer before 1.21, or with
   * `max_prepared_statements = 0`): each statement is then parsed on every call.
   * Left on there, the first named statement found on the wrong server
   * connection turns naming off for the pool, with a process warning.
   */
  readonly preparedStatements?: boolean;
  /**
   * Whether the pool was made with node-postgres' `pipeline: true` (default
   * false). Then `BEGIN` goes out with the claim and the record with `COMMIT`,
   * the bare transaction's round trips. Without it each statement waits for
   * the answer to the one before: node-postgres deprecates a statement issued
   * on a client that is still running one.
   */
  readonly pipeline?: boolean;
}

/**
 * The client a pool hands out. node-postgres declares `connect()` twice (a
 * promise and a callback form) and TypeScript infers from the last one only,
 * so both forms are matched to read the promise's client.
 */
export type PgPoolClient<Pool> = Pool extends {
  connect(): Promise<infer Client extends PgClientLike>;
  connect(callback: never): void;
}
  ? Client
  : never;

/**
 * A node-postgres pool as a retrysafe database. Route handlers receive the
 * pool's own client: `pg.PoolClient` for a `pg.Pool`, without a type argument.
 */
export function fromPg<Pool extends PgPoolLike<PgClientLike>>(
  pool: Pool,
  options?: FromPgOptions,
): SqlDatabase<PgPoolClient<Pool>>;
/** The same, with the client type named: `fromPg<pg.PoolClient>(pool)`. */
export function fromPg<Client extends PgClientLike>(
  pool: PgPoolLike<Client>,
  options?: FromPgOptions,
): SqlDatabase<Client>;
export function fromPg<Client extends PgClientLike>(
  pool: PgPoolLike<Client>,
  options: FromPgOptions = {},
): SqlDatabase<Client> {
  const naming: Naming = { on: options.preparedStatements ?? true };
  const pipelined = options.pipeline ?? false;
  if (!guardedPools.has(pool)) {
    guardedPools.add(pool);
    pool.on?.('acquire', guard);
  }
  return {
    async transaction(work, opening) {
      const client = await pool.connect();
      guard(client);
      let rollbackFailed: Error | undefined;
      try {
        const result = await begun(client, naming, pipelined, work, opening);
        await client.query('COMMIT');
        return result;
      } catch (error) {
        // The statement in flight fails on its own when the connection is lost; a rollback would only wait.
        // A connection whose rollback fails is in an unknown state: destroy it rather than reuse it.
        if (!lost.has(client))
          await client.query('ROLLBACK').catch((failure: unknown) => {
            rollbackFailed = failure instanceof Error ? failure : new Error('ROLLBACK failed');
          });
        throw error;
      } finally {
        client.release(lost.get(client) ?? rollbackFailed ?? false);
      }
    },
    runner: (client) => pgSql(client, naming),
    query: pgSql(pool, naming, true).query,
  };
}

/*
 * node-postgres takes the pool's own 'error' listener off a client it hands out: a backend that goes away
 * meanwhile (failover, restart, terminated) would emit an unhandled 'error' and end the process. The guard
 * goes on as the pool hands the client out, since the error can come in the same socket read as the
 * connection's readiness, before `connect()` resolves; it stays, and only marks the client as lost.
 * Pool and clients are guarded once, whichever `fromPg` call saw them first: an application may wrap
 * one pool many times, and a listener per call would pile up on the pool and on every connection.
 */
const guardedPools = new WeakSet<object>();
const guardedClients = new WeakSet<PgClientLike>();
const lost = new WeakMap<PgClientLike, Error>();

function guard(client: PgClientLike): void {
  if (guardedClients.has(client)) return;
  guardedClients.add(client);
  client.on('error', (error) => {
    if (!lost.has(client)) lost.set(client, error);
  });
}

/** Whether retrysafe's statements go out by name on a pool; turned off for good once a pooler is found between it and PostgreSQL. */
interface Naming {
  on: boolean;
}

/**
 * Sends a statement: by name, so that node-postgres prepares it once per
 * connection, while naming is on. A named statement found missing, or found
 * already there, on the server connection means a pooler in transaction mode
 * hands out server connections: naming stops. `alone`: the statement is its
 * own transaction, so it runs again, unnamed; in a transaction it has aborted
 * it, and the error is the caller's (its retry runs unnamed). The driver's
 * own promise is returned, with a handler only on a named statement: an async
 * function around it made two promises more on every statement.
 */
function send(
  client: Pick<PgClientLike, 'query'>,
  naming: Naming,
  text: string | Statement,
  values: readonly unknown[] | undefined,
  alone = false,
): Promise<{ rows: unknown[] }> {
  const bound = values === undefined ? undefined : [...values];
  if (typeof text === 'string' || !naming.on) return client.query(typeof text === 'string' ? text : text.text, bound);
  return client.query({ name: text.name, text: text.text }, bound).catch((error: unknown) => {
    const code = sqlState(error);
    if (code === undefined || !PREPARED_STATEMENT_ELSEWHERE.has(code)) throw error;
    stopNaming(naming, code);
    if (!alone) throw error;
    return client.query(text.text, bound);
  });
}

/** A named statement was not where node-postgres prepared it: a pooler in transaction mode hands out server connections. */
function stopNaming(naming: Naming, code: string): void {
  if (!naming.on) return;
  naming.on = false;
  warnProcess(
    'RETRYSAFE_POOLER_DETECTED',
    `a named statement was not where node-postgres prepared it (SQLSTATE ${code}): a pooler in transaction mode stands in front of PostgreSQL. ` +
      "This pool's statements are no longer named. Say so up front with fromPg(pool, { preparedStatements: false }).",
  );
}

/**
 * BEGIN, the opening statement and the work. On a pool made with
 * `pipeline: true` BEGIN and the opening statement are issued together, so
 * node-postgres sends them at once, and a statement the work leaves in flight
 * goes with COMMIT (`SqlClient.pipelined`); otherwise each waits for the
 * answer to the one before.
 */
function begun<Client extends PgClientLike, T>(
  client: Client,
  naming: Naming,
  pipelined: boolean,
  work: (sql: SqlClient, tx: Client, opened: Opened) => Promise<T>,
  opening: BoundStatement | undefined,
): Promise<T> {
  const sql = pgSql(client, naming);
  if (!pipelined) return client.query(BEGIN_READ_COMMITTED).then(() => openWith(sql, client, work, opening));
  const begin = client.query(BEGIN_READ_COMMITTED);
  const opened = open(sql, opening);
  return begin.then(() => opened).then((result) => work({ pipelined: true, ...sql }, client, result));
}

/** retrysafe's statement runner on a client or a pool; `alone`: on a pool, each statement its own transaction. */
function pgSql(target: Pick<PgClientLike, 'query'>, naming: Naming, alone = false): SqlClient {
  return {
    query<Row>(text: string | Statement, values?: readonly unknown[]) {
      // The driver's result as is: its `rows` are the rows.
      return send(target, naming, text, values, alone) as Promise<{ rows: Row[] }>;
    },
    async exec(script: string) {
      await target.query(script);
    },
  };
}
