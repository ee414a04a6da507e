import type { SqlClient, SqlDatabase, Statement } from '../../store/sql-client.js';

/** The members of a node-postgres `PoolClient` that retrysafe calls. */
export interface PgClientLike {
  query(text: string | { name: string; text: string }, values?: unknown[]): Promise<{ rows: unknown[] }>;
  release(destroy?: boolean | Error): void;
}

/** The members of a node-postgres `Pool` that retrysafe calls. */
export interface PgPoolLike<Client extends PgClientLike> {
  connect(): Promise<Client>;
  query(text: string | { name: string; text: string }, values?: unknown[]): Promise<{ rows: unknown[] }>;
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
export function fromPg<Pool extends PgPoolLike<PgClientLike>>(pool: Pool): SqlDatabase<PgPoolClient<Pool>>;
export function fromPg<Client extends PgClientLike>(pool: PgPoolLike<Client>): SqlDatabase<Client> {
  return {
    async transaction(work) {
      const client = await pool.connect();
      let broken: Error | undefined;
      try {
        await client.query('BEGIN');
        const result = await work(pgSql(client), client);
        await client.query('COMMIT');
        return result;
      } catch (error) {
        // A connection whose rollback fails is in an unknown state: destroy it rather than reuse it.
        await client.query('ROLLBACK').catch((rollbackError: unknown) => {
          broken = rollbackError instanceof Error ? rollbackError : new Error('ROLLBACK failed');
        });
        throw error;
      } finally {
        client.release(broken ?? false);
      }
    },
    query: pgSql(pool).query,
  };
}

function pgSql(target: Pick<PgClientLike, 'query'>): SqlClient {
  return {
    async query<Row>(text: string | Statement, values?: readonly unknown[]) {
      // A named statement is prepared once per connection by node-postgres.
      const result = await target.query(typeof text === 'string' ? text : { name: text.name, text: text.text }, values === undefined ? undefined : [...values]);
      return { rows: result.rows as Row[] };
    },
    async exec(script: string) {
      await target.query(script);
    },
  };
}
