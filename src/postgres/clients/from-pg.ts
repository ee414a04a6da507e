import type { SqlClient, SqlDatabase, Statement } from '../../store/sql-client.js';

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
}

export interface FromPgOptions {
  /**
   * Whether retrysafe's statements are named, so node-postgres prepares each
   * once per connection (default true). Set false behind a pooler in
   * transaction mode that does not carry prepared statements from one server
   * connection to the next (PgBouncer before 1.21, or with
   * `max_prepared_statements = 0`): each statement is then parsed on every call.
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
export function fromPg<Client extends PgClientLike>(pool: PgPoolLike<Client>, options: FromPgOptions = {}): SqlDatabase<Client> {
  const named = options.preparedStatements ?? true;
  return {
    async transaction(work) {
      const client = await pool.connect();
      let broken: Error | undefined;
      // node-postgres takes the pool's own 'error' listener off a checked-out client: a backend that goes
      // away meanwhile (failover, restart, terminated) would emit an unhandled 'error' and end the process.
      // The statement in flight fails on its own; the listener only marks the client for destruction.
      const onError = (error: Error): void => {
        broken ??= error;
      };
      client.on('error', onError);
      try {
        await client.query('BEGIN');
        const result = await work(pgSql(client, named), client);
        await client.query('COMMIT');
        return result;
      } catch (error) {
        // A connection whose rollback fails is in an unknown state: destroy it rather than reuse it.
        if (broken === undefined) {
          await client.query('ROLLBACK').catch((rollbackError: unknown) => {
            broken ??= rollbackError instanceof Error ? rollbackError : new Error('ROLLBACK failed');
          });
        }
        throw error;
      } finally {
        client.removeListener('error', onError);
        client.release(broken ?? false);
      }
    },
    query: pgSql(pool, named).query,
  };
}

function pgSql(target: Pick<PgClientLike, 'query'>, named: boolean): SqlClient {
  return {
    async query<Row>(text: string | Statement, values?: readonly unknown[]) {
      // A named statement is prepared once per connection by node-postgres.
      const sent = typeof text === 'string' ? text : named ? { name: text.name, text: text.text } : text.text;
      const result = await target.query(sent, values === undefined ? undefined : [...values]);
      return { rows: result.rows as Row[] };
    },
    async exec(script: string) {
      await target.query(script);
    },
  };
}
