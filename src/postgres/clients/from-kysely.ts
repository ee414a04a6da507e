import { openWith, type SqlClient, type SqlDatabase, type Statement } from '../../store/sql-client.js';

/** What Kysely's `CompiledQuery.raw(text, values)` builds, written out so that retrysafe need not import Kysely. */
export interface KyselyRawQuery {
  readonly query: {
    readonly kind: 'RawNode';
    readonly sqlFragments: readonly string[];
    readonly parameters: readonly never[];
  };
  readonly queryId: { readonly queryId: string };
  readonly sql: string;
  readonly parameters: readonly unknown[];
}

/** The members of a Kysely instance or transaction that retrysafe calls. */
export interface KyselyQueryable {
  withoutPlugins(): { executeQuery<Row>(query: KyselyRawQuery): Promise<{ readonly rows: Row[] }> };
}

/** The members of a `Kysely<DB>` instance that retrysafe calls. */
export interface KyselyLike<Tx extends KyselyQueryable> extends KyselyQueryable {
  transaction(): {
    setIsolationLevel(level: 'read committed'): { execute<T>(work: (tx: Tx) => Promise<T>): Promise<T> };
  };
}

/**
 * A Kysely instance as a retrysafe database. Route handlers receive Kysely's
 * `Transaction<DB>`. retrysafe decides to commit or roll back only after the
 * handler, and says so by resolving or throwing, which is exactly
 * `db.transaction().execute()`'s rule: no controlled transaction is needed.
 */
export function fromKysely<Tx extends KyselyQueryable>(db: KyselyLike<Tx>): SqlDatabase<Tx> {
  return {
    transaction: (work, opening) =>
      db
        .transaction()
        .setIsolationLevel('read committed')
        .execute((tx) => openWith(kyselyRunner(tx), tx, work, opening)),
    runner: kyselyRunner,
    query: kyselyRunner(db).query,
  };
}

/**
 * retrysafe's statement runner over a Kysely transaction, for
 * `enqueue(kyselyRunner(tx), …)`. Plugins are left out: a plugin that renames
 * columns (CamelCasePlugin) would rename retrysafe's own.
 */
export function kyselyRunner(target: KyselyQueryable): SqlClient {
  const run = <Row>(text: string, values: readonly unknown[]) =>
    target.withoutPlugins().executeQuery<Row>(rawQuery(text, values));
  return {
    async query<Row>(text: string | Statement, values?: readonly unknown[]) {
      const { rows } = await run<Row>(typeof text === 'string' ? text : text.text, values ?? []);
      return { rows };
    },
    async exec(script: string) {
      await run(script, []);
    },
  };
}

function rawQuery(text: string, values: readonly unknown[]): KyselyRawQuery {
  return {
    query: { kind: 'RawNode', sqlFragments: [text], parameters: [] },
    queryId: UNUSED_QUERY_ID,
    sql: text,
    parameters: values,
  };
}

/** Kysely keys plugin state by query id; without plugins nothing reads it, so one shared id will do. */
const UNUSED_QUERY_ID = { queryId: 'retrysafe' };
