import { setImmediate } from 'node:timers/promises';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { fromPg } from '../../src/postgres/index.js';
import { sqlState } from '../../src/postgres/sqlstate.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';

/**
 * What a pooler in transaction mode does to node-postgres' named statements,
 * done here on one server session: the statement node-postgres prepared is
 * gone from it (`DEALLOCATE`: 26000), or a statement of that name is already
 * there (`PREPARE`: 42P05). `fromPg` takes either as the pooler's sign and
 * stops naming. test/faults/pooler.test.ts does the same through PgBouncer.
 */
describe('fromPg when a named statement is not where node-postgres prepared it', () => {
  let db: TestDatabase;
  let pool: pg.Pool;
  const warnings: string[] = [];
  const onWarning = (warning: Error): void => {
    if ((warning as { code?: string }).code === 'RETRYSAFE_POOLER_DETECTED') warnings.push(warning.message);
  };
  const prepared = async (): Promise<string[]> =>
    (await pool.query<{ name: string }>('SELECT name FROM pg_prepared_statements ORDER BY name')).rows.map(
      (row) => row.name,
    );
  const statement = { name: 'retrysafe_moved', text: 'SELECT $1::int AS n' };
  const another = { name: 'retrysafe_after', text: 'SELECT $1::int + 1 AS n' };

  beforeAll(async () => {
    db = await createTestDatabase();
    process.on('warning', onWarning);
  });
  afterAll(async () => {
    process.off('warning', onWarning);
    await db.drop();
  });
  beforeEach(() => {
    // One connection: every statement meets the same server session.
    pool = new pg.Pool({ connectionString: db.url, max: 1 });
    warnings.length = 0;
  });
  afterEach(() => pool.end());

  it('runs a statement on its own again unnamed (26000), then names none, with one process warning', async () => {
    const database = fromPg(pool);
    await database.query(statement, [1]);
    expect(await prepared()).toEqual(['retrysafe_moved']);
    await pool.query('DEALLOCATE retrysafe_moved');
    expect((await database.query(statement, [2])).rows).toEqual([{ n: 2 }]);
    expect((await database.transaction((sql) => sql.query(another, [2]))).rows).toEqual([{ n: 3 }]);
    expect(await prepared()).toEqual([]);
    await setImmediate();
    expect(warnings).toEqual([expect.stringContaining('SQLSTATE 26000')]);
  });

  it('fails the transaction the error aborted (26000), and the next one runs unnamed', async () => {
    const database = fromPg(pool);
    await database.transaction((sql) => sql.query(statement, [1]));
    await pool.query('DEALLOCATE retrysafe_moved');
    const failed = await database
      .transaction((sql) => sql.query(statement, [2]))
      .then(
        () => 'committed',
        (error: { code?: string }) => error.code,
      );
    expect(failed).toBe('26000');
    expect((await database.transaction((sql) => sql.query(statement, [3]))).rows).toEqual([{ n: 3 }]);
    expect(await prepared()).toEqual([]);
    await setImmediate();
    expect(warnings).toHaveLength(1);
  });

  it('runs a statement on its own again unnamed when its name is taken on the session (42P05)', async () => {
    const database = fromPg(pool);
    await pool.query('PREPARE retrysafe_moved AS SELECT 0');
    expect((await database.query(statement, [2])).rows).toEqual([{ n: 2 }]);
    expect((await database.query(another, [2])).rows).toEqual([{ n: 3 }]);
    // node-postgres' pool ends a session whose statement failed: the next one has nothing prepared, named or not.
    expect(await prepared()).toEqual([]);
    await setImmediate();
    expect(warnings).toEqual([expect.stringContaining('SQLSTATE 42P05')]);
  });

  it('keeps naming while every statement is where it was prepared', async () => {
    const database = fromPg(pool);
    await database.query(statement, [1]);
    await database.transaction((sql) => sql.query(another, [1]));
    expect(await prepared()).toEqual(['retrysafe_after', 'retrysafe_moved']);
    await setImmediate();
    expect(warnings).toEqual([]);
  });

  /** A transaction opened by `statement` with `n`, sending `another` with COMMIT: what each answered. */
  const opensAndCommits = (database: ReturnType<typeof fromPg>, n: number) => {
    let withCommit: Promise<{ readonly rows: readonly unknown[] }> | undefined;
    const opening = database.transaction(
      (sql, _tx, opened) => {
        if ('error' in opened) return Promise.reject(new Error('the opening failed', { cause: opened.error }));
        withCommit = sql.withCommit?.(another, [n]);
        withCommit?.catch(() => undefined);
        return Promise.resolve(opened.rows);
      },
      { statement, values: [n] },
    );
    return opening.then(async (rows) => ({ opening: rows, withCommit: (await withCommit)?.rows }));
  };

  /** The SQLSTATE a transaction failed with, through the error's causes. */
  const failureOf = (transaction: Promise<unknown>): Promise<string | undefined> =>
    transaction.then(() => 'committed', sqlState);

  it('sends an opening with BEGIN and a statement with COMMIT as EXECUTE, each prepared once per connection under a name of its own', async () => {
    const database = fromPg(pool);
    expect(await opensAndCommits(database, 1)).toEqual({ opening: [{ n: 1 }], withCommit: [{ n: 2 }] });
    expect(await opensAndCommits(database, 5)).toEqual({ opening: [{ n: 5 }], withCommit: [{ n: 6 }] });
    expect(await prepared()).toEqual(['retrysafe_after_execute', 'retrysafe_moved_execute']);
    await setImmediate();
    expect(warnings).toEqual([]);
  });

  it.each([
    {
      what: 'EXECUTE finds its statement gone',
      code: '26000',
      before: async (database: ReturnType<typeof fromPg>) => {
        await opensAndCommits(database, 1);
        await pool.query('DEALLOCATE retrysafe_moved_execute');
      },
    },
    {
      // The opening runs; the statement with COMMIT fails, COMMIT with it.
      what: 'PREPARE finds the name taken',
      code: '42P05',
      before: async () => {
        await pool.query('PREPARE retrysafe_after_execute AS SELECT 0');
      },
    },
  ])('fails the transaction whose $what ($code), and the next one runs unnamed', async ({ code, before }) => {
    const database = fromPg(pool);
    await before(database);
    expect(await failureOf(opensAndCommits(database, 2))).toBe(code);
    expect(await opensAndCommits(database, 3)).toEqual({ opening: [{ n: 3 }], withCommit: undefined });
    await setImmediate();
    expect(warnings).toEqual([expect.stringContaining(`SQLSTATE ${code}`)]);
  });

  it('refuses a second statement to go with COMMIT; the first goes', async () => {
    const database = fromPg(pool);
    let first: Promise<{ readonly rows: readonly unknown[] }> | undefined;
    const second = await database.transaction((sql) => {
      first = sql.withCommit?.(another, [1]);
      return (sql.withCommit?.(another, [2]) ?? Promise.resolve()).then(
        () => 'sent',
        (error: { code?: string }) => error.code,
      );
    });
    expect(second).toBe('misuse');
    expect((await first)?.rows).toEqual([{ n: 2 }]);
  });
});
