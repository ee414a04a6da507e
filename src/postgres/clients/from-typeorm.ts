import { RetrysafeError } from '../../core/errors.js';
import { openWith, type SqlClient, type SqlDatabase, type Statement } from '../../store/sql-client.js';

/**
 * The members of a TypeORM `QueryRunner` that retrysafe calls. Its structured
 * result, because the plain one of an UPDATE or DELETE is `[rows, rowCount]`.
 */
export interface TypeORMQueryRunnerLike {
  query(
    query: string,
    parameters: unknown[] | undefined,
    useStructuredResult: true,
  ): Promise<{ readonly records: unknown[] }>;
  release(): Promise<void>;
}

/** The member of TypeORM's `EntityManager` that retrysafe calls: a transaction's manager has its query runner. */
export interface TypeORMManagerLike {
  readonly queryRunner?: TypeORMQueryRunnerLike | undefined;
}

/** The members of a TypeORM `DataSource` (`type: 'postgres'`) that retrysafe calls. */
export interface TypeORMLike<Tx extends TypeORMManagerLike> {
  /** The data source's own manager, whose type the transaction's shares: `Tx` is read from it. */
  readonly manager: Tx;
  transaction<T>(isolationLevel: 'READ COMMITTED', work: (manager: Tx) => Promise<T>): Promise<T>;
  createQueryRunner(): TypeORMQueryRunnerLike;
}

/**
 * A TypeORM data source as a retrysafe database. Route handlers receive the
 * transaction's `EntityManager`. `dataSource.transaction(async (manager) => …)`
 * commits when the callback resolves and rolls back when it throws, which is
 * how retrysafe says which. The manager's query runner holds the transaction's
 * connection: retrysafe's statements go through it, with their `$n`
 * parameters, which TypeORM's PostgreSQL driver sends as they are.
 */
export function fromTypeORM<Tx extends TypeORMManagerLike>(dataSource: TypeORMLike<Tx>): SqlDatabase<Tx> {
  return {
    transaction: (work, opening) =>
      dataSource.transaction('READ COMMITTED', (manager) => openWith(typeormRunner(manager), manager, work, opening)),
    runner: typeormRunner,
    async query<Row>(text: string | Statement, values?: readonly unknown[]) {
      const runner = dataSource.createQueryRunner();
      try {
        return await queryRunnerSql(runner).query<Row>(text, values);
      } finally {
        await runner.release();
      }
    },
  };
}

/** retrysafe's statement runner in a TypeORM transaction, for `enqueue(typeormRunner(manager), …)`. */
export function typeormRunner(manager: TypeORMManagerLike): SqlClient {
  if (manager.queryRunner === undefined) {
    throw new RetrysafeError(
      'misuse',
      'This EntityManager runs no transaction: pass the one dataSource.transaction() hands its callback.',
    );
  }
  return queryRunnerSql(manager.queryRunner);
}

function queryRunnerSql(runner: TypeORMQueryRunnerLike): SqlClient {
  return {
    async query<Row>(text: string | Statement, values?: readonly unknown[]) {
      const { records } = await runner.query(
        typeof text === 'string' ? text : text.text,
        values === undefined ? undefined : [...values],
        true,
      );
      return { rows: records as Row[] };
    },
    async exec(script: string) {
      await runner.query(script, undefined, true);
    },
  };
}
