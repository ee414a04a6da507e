import { RetrysafeError } from '../../core/errors.js';
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
import { extend } from '../../core/extend.js';
import { executeText, prepareText } from './pg-execute.js';
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
   * once per connection, and the atomic claim and record are prepared by SQL
   * `PREPARE` to go with `BEGIN` and `COMMIT` (default true). Set false
   * behind a pooler in transaction mode: PgBouncer before 1.21 carries no
   * prepared statement from one server connection to the next, later
   * versions the protocol's only. Each statement is then parsed on every
   * call, in a round trip of its own. Left on there, the first named
   * statement found on the wrong server connection turns naming off for the
   * pool, with a process warning.
   */
  readonly preparedStatements?: boolean;
  /**
   * Whether the pool was made with node-postgres' `pipeline: true` (default
   * false). Then each statement is sent at once, without waiting for the
   * answer to the one before. Either way, while statements are named,
   * `BEGIN` goes out with the claim and the record with `COMMIT`: the bare
   * transaction's round trips.
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
      const ending: Ending = {};
      try {
        const result = await begun(client, naming, pipelined, work, opening, ending);
        await committed(client, naming, ending.deferred);
        return result;
      } catch (error) {
        ending.deferred?.reject(error);
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

/** What the work of a transaction on a pool without pipeline mode left to go with COMMIT (`SqlClient.withCommit`). */
interface Ending {
  deferred?: Deferred;
}

interface Deferred {
  readonly bound: BoundStatement;
  readonly resolve: (result: { rows: unknown[] }) => void;
  readonly reject: (error: unknown) => void;
}

/**
 * BEGIN, the opening statement and the work. On a pool made with
 * `pipeline: true` BEGIN and the opening statement are issued together, so
 * node-postgres sends them at once, and `withCommit` issues its statement
 * at once, ahead of COMMIT. Otherwise, while statements are named, the
 * opening goes as `EXECUTE` in BEGIN's simple query, and `withCommit`'s in
 * COMMIT's (`pg-execute.ts`): the pipelined transaction's round trips and
 * writes, on any pool. Unnamed, each statement waits for the answer to the
 * one before.
 */
function begun<Client extends PgClientLike, T>(
  client: Client,
  naming: Naming,
  pipelined: boolean,
  work: (sql: SqlClient, tx: Client, opened: Opened) => Promise<T>,
  opening: BoundStatement | undefined,
  ending: Ending,
): Promise<T> {
  const sql = pgSql(client, naming);
  if (pipelined) {
    const begin = client.query(BEGIN_READ_COMMITTED);
    const opened = open(sql, opening);
    return begin.then(() => opened).then((result) => work(extend(sql, { withCommit: sql.query }), client, result));
  }
  if (!naming.on) return client.query(BEGIN_READ_COMMITTED).then(() => openWith(sql, client, work, opening));
  const withCommit = (statement: Statement, values: readonly unknown[]) =>
    new Promise<{ rows: unknown[] }>((resolve, reject) => {
      if (ending.deferred !== undefined)
        throw new RetrysafeError('misuse', 'One statement goes with COMMIT: withCommit was called twice.');
      ending.deferred = { bound: { statement, values }, resolve, reject };
    });
  const executed = opening === undefined ? undefined : executeText(opening);
  const opened =
    opening === undefined || executed === undefined
      ? client.query(BEGIN_READ_COMMITTED).then(() => open(sql, opening))
      : withPrepared(client, naming, opening.statement, `${BEGIN_READ_COMMITTED}; ${executed}`).then(
          (results): Opened => ({ rows: rowsOf(results, 1) }),
          (error: unknown): Opened => ({ error }),
        );
  return opened.then((result) => work(extend(sql, { withCommit }), client, result));
}

/**
 * COMMIT, with the statement the work left for it: in one simple query
 * while statements are named and its values can be literals, else on its
 * own first. Its promise settles with what it came to; when it fails,
 * COMMIT was not run and the caller rolls back.
 */
async function committed(client: PgClientLike, naming: Naming, deferred: Deferred | undefined): Promise<void> {
  if (deferred === undefined) {
    await client.query('COMMIT');
    return;
  }
  const executed = naming.on ? executeText(deferred.bound) : undefined;
  const { statement, values } = deferred.bound;
  const ran =
    executed === undefined
      ? send(client, naming, statement, values)
      : withPrepared(client, naming, statement, `${executed}; COMMIT`).then((results) => ({
          rows: rowsOf(results, 0),
        }));
  deferred.resolve(await ran);
  if (executed === undefined) await client.query('COMMIT');
}

/** The SQL names each connection has prepared (`pg-execute.ts`), kept for as long as the connection is. */
const preparedOn = new WeakMap<PgClientLike, Set<string>>();

/**
 * Runs `text`, which executes `statement` by its SQL name, after preparing
 * it on this connection if it is the first time: in a round trip of its
 * own, so that whether it exists is known. A statement found missing, or
 * already there, means a pooler hands out server connections: naming stops.
 */
function withPrepared(client: PgClientLike, naming: Naming, statement: Statement, text: string): Promise<unknown> {
  let names = preparedOn.get(client);
  if (names === undefined) preparedOn.set(client, (names = new Set()));
  const prepared = names;
  const ran = prepared.has(statement.name)
    ? client.query(text)
    : client.query(prepareText(statement)).then(() => {
        prepared.add(statement.name);
        return client.query(text);
      });
  return ran.catch((error: unknown) => {
    const code = sqlState(error);
    if (code !== undefined && PREPARED_STATEMENT_ELSEWHERE.has(code)) stopNaming(naming, code);
    throw error;
  });
}

/** The rows of the `at`th statement of a simple query: node-postgres answers one of several statements with one result each. */
function rowsOf(results: unknown, at: number): unknown[] {
  const all = (Array.isArray(results) ? results : [results]) as { rows: unknown[] }[];
  return all[at]?.rows ?? [];
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
