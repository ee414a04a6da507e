import { openWith, type SqlClient, type SqlDatabase, type Statement } from '../../store/sql-client.js';
import { insideTransaction } from './read-committed.js';

/** What Knex's PostgreSQL client resolves a raw query to: node-postgres' result. */
export interface KnexRawResult {
  readonly rows: unknown[];
}

/** The member of a Knex instance or transaction that retrysafe calls. */
export interface KnexQueryable {
  raw(sql: string, bindings: readonly unknown[]): PromiseLike<KnexRawResult>;
}

/** The members of a Knex instance (`client: 'pg'`) that retrysafe calls. */
export interface KnexLike<Tx extends KnexQueryable> extends KnexQueryable {
  transaction<T>(work: (trx: Tx) => Promise<T>, config: { readonly isolationLevel: 'read committed' }): Promise<T>;
  /** True on a `Knex.Transaction`, which has a Knex instance's members too. */
  readonly isTransaction?: boolean;
}

/**
 * A Knex instance as a retrysafe database. Route handlers receive Knex's
 * `Knex.Transaction`. `knex.transaction(async (trx) => …)` commits when the
 * callback resolves and rolls back when it throws, which is how retrysafe
 * says which. `trx.commit()` or `trx.rollback()` in a handler ends the
 * transaction before the operation record is written: the request answers
 * 503 and a retry runs again, which after a commit writes the effect twice.
 * It takes the Knex instance, not a transaction.
 */
export function fromKnex<Tx extends KnexQueryable>(knex: KnexLike<Tx>): SqlDatabase<Tx> {
  if (knex.isTransaction === true) throw insideTransaction('fromKnex(knex) takes the Knex instance, not a transaction');
  return {
    // Knex's PostgreSQL client says it in BEGIN: `BEGIN TRANSACTION ISOLATION LEVEL read committed`.
    transaction: (work, opening) =>
      knex.transaction((trx) => openWith(knexRunner(trx), trx, work, opening), READ_COMMITTED),
    runner: knexRunner,
    query: knexRunner(knex).query,
  };
}

const READ_COMMITTED = { isolationLevel: 'read committed' } as const;

/** retrysafe's statement runner over a Knex transaction, for `enqueue(knexRunner(trx), …)`. */
export function knexRunner(target: KnexQueryable): SqlClient {
  return {
    async query<Row>(text: string | Statement, values?: readonly unknown[]) {
      const { sql, bindings } = knexPlaceholders(typeof text === 'string' ? text : text.text, values ?? []);
      const { rows } = await target.raw(sql, bindings);
      return { rows: rows as Row[] };
    },
    async exec(script: string) {
      await target.raw(knexPlaceholders(script, []).sql, []);
    },
  };
}

/**
 * Quoted text, quoted names, comments and dollar-quoted bodies (a PL/pgSQL
 * function's own `$1`), matched whole so that no `$n` inside them is taken for
 * a parameter; then a parameter `$n`; then a `?`.
 */
const TOKENS = /'(?:[^']|'')*'|"(?:[^"]|"")*"|--[^\n]*|\/\*[\s\S]*?\*\/|(\$(?:[A-Za-z_]\w*)?\$)[\s\S]*?\1|\$(\d+)|\?/g;

/**
 * A `$n` statement as Knex's `raw` takes it: each `$n` becomes `?` with its
 * value, in order, so a repeated `$n` binds its value again. Knex's PostgreSQL
 * client turns every unescaped `?` into a parameter, in a statement without
 * values too and inside quotes, so every other `?` (jsonb's `?` operator, one
 * in a string or a comment) is escaped as `\?`, which Knex sends as `?`. A `\`
 * right before a `?` cannot pass through Knex at all; retrysafe's SQL has none.
 */
function knexPlaceholders(
  text: string,
  values: readonly unknown[],
): { readonly sql: string; readonly bindings: readonly unknown[] } {
  const bindings: unknown[] = [];
  const sql = text.replace(TOKENS, (token: string, _tag: unknown, position: string | undefined) => {
    if (position === undefined) return token.replaceAll('?', '\\?');
    bindings.push(values[Number(position) - 1]);
    return '?';
  });
  return { sql, bindings };
}
