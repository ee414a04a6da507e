import { warnProcess } from '../../core/process-warning.js';
import type { SqlClient, SqlDatabase, Statement } from '../../store/sql-client.js';
import { PREPARED_STATEMENT_ELSEWHERE, sqlState } from '../sqlstate.js';

/** The members of a node-postgres `PoolClient` that retrysafe calls. */
export interface PgClientLike {
  /**
   * node-postgres' pipeline mode (`new pg.Pool({ pipeline: true })`, pg 8.23
   * and later): statements go out without waiting for earlier answers.
   */
  readonly pipeline?: boolean;
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
}

/**
 * The client a pool hands out. node-postgres declares `connect()` twice (a
 * promise and a callback form) and TypeScript infers from the last one only,
 * so both forms are matched to read the promise's client.
 */
export type PgPoolClient<Pool> = Pool extends { connect(): Promise<infer Client extends PgClientLike>; connect(callback: never): void } ? Client : never;

/**
 * A node-postgres pool as a retrysafe database. Route handlers receive the
 * pool's own client: `pg.PoolClient` for a `pg.Pool`, without a type argument.
 */
export function fromPg<Pool extends PgPoolLike<PgClientLike>>(pool: Pool, options?: FromPgOptions): SqlDatabase<PgPoolClient<Pool>>;
/** The same, with the client type named: `fromPg<pg.PoolClient>(pool)`. */
export function fromPg<Client extends PgClientLike>(pool: PgPoolLike<Client>, options?: FromPgOptions): SqlDatabase<Client>;
export function fromPg<Client extends PgClientLike>(pool: PgPoolLike<Client>, options: FromPgOptions = {}): SqlDatabase<Client> {
  const naming: Naming = { on: options.preparedStatements ?? true };
  // node-postgres takes the pool's own 'error' listener off a client it hands out: a backend that goes away
  // meanwhile (failover, restart, terminated) would emit an unhandled 'error' and end the process. The guard
  // goes on as the pool hands the client out, since the error can come in the same socket read as the
  // connection's readiness, before `connect()` resolves; it stays, and only marks the client as lost.
  const lost = new WeakMap<Client, Error>();
  const guarded = new WeakSet<Client>();
  const guard = (client: Client): void => {
    if (guarded.has(client)) return;
    guarded.add(client);
    client.on('error', (error) => {
      if (!lost.has(client)) lost.set(client, error);
    });
  };
  pool.on?.('acquire', guard);
  return {
    async transaction(work) {
      const client = await pool.connect();
      guard(client);
      let rollbackFailed: Error | undefined;
      try {
        const begun = client.query('BEGIN');
        const pipelined = client.pipeline === true;
        // Pipelined, the first statement goes with BEGIN; every answer waits for BEGIN's, so none is used before it.
        if (pipelined) begun.catch(() => undefined);
        else await begun;
        const result = await work(pgSql(client, naming, pipelined ? begun : undefined), client);
        await begun;
        await client.query('COMMIT');
        return result;
      } catch (error) {
        // The statement in flight fails on its own when the connection is lost; a rollback would only wait.
        // A connection whose rollback fails is in an unknown state: destroy it rather than reuse it.
        if (!lost.has(client)) {
          await client.query('ROLLBACK').catch((failure: unknown) => {
            rollbackFailed = failure instanceof Error ? failure : new Error('ROLLBACK failed');
          });
        }
        throw error;
      } finally {
        client.release(lost.get(client) ?? rollbackFailed ?? false);
      }
    },
    runner: (client) => pgSql(client, naming),
    query: pgSql(pool, naming, undefined, true).query,
  };
}

/** Whether retrysafe's statements go out by name on a pool; turned off for good once a pooler is found between it and PostgreSQL. */
interface Naming {
  on: boolean;
}

/**
 * `begun`: the pipelined BEGIN, in flight; the client then pipelines, and a
 * failed BEGIN fails every answer. `alone`: each statement is its own
 * transaction, so one that failed can run again.
 */
function pgSql(target: Pick<PgClientLike, 'query'>, naming: Naming, begun?: Promise<unknown>, alone = false): SqlClient {
  const run = async <Row>(sent: string | { name: string; text: string }, values: unknown[] | undefined): Promise<{ rows: Row[] }> => {
    const [, result] = await Promise.all([begun, target.query(sent, values)]);
    return { rows: result.rows as Row[] };
  };
  return {
    async query<Row>(text: string | Statement, values?: readonly unknown[]) {
      const bound = values === undefined ? undefined : [...values];
      // A named statement is prepared once per connection by node-postgres.
      if (typeof text === 'string' || !naming.on) return run<Row>(typeof text === 'string' ? text : text.text, bound);
      try {
        return await run<Row>({ name: text.name, text: text.text }, bound);
      } catch (error) {
        const code = sqlState(error);
        if (code === undefined || !PREPARED_STATEMENT_ELSEWHERE.has(code)) throw error;
        stopNaming(naming, code);
        // Inside a transaction the error has aborted it: the caller's retry runs unnamed.
        if (!alone) throw error;
        return run<Row>(text.text, bound);
      }
    },
    async exec(script: string) {
      await target.query(script);
    },
    pipelined: begun !== undefined,
  };
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
