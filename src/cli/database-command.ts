import { type Command, InvalidArgumentError } from 'commander';
import type pg from 'pg';
import type { OperationIdentity } from '../core/identity.js';
import { fromPg } from '../postgres/clients/from-pg.js';
import { sqlState, UNDEFINED_TABLE } from '../postgres/sqlstate.js';
import { portable, type SqlClient, type SqlDatabase } from '../store/sql-client.js';
import { print, printError } from './terminal-text.js';
import { fits, type NumberRule, rangeOf } from '../core/option-rules.js';
import { operationQueryRules } from '../store/operator-rules.js';

/** The options every command that talks to the database shares. */
export interface DatabaseFlags {
  readonly databaseUrl?: string;
  readonly json?: boolean;
}

/** Exit code of a usage error; commander's own usage errors get it too (see main.ts). */
const USAGE_ERROR = 2;
/** Exit code of a failure at run time: the database is unreachable, the operation is not there. */
const RUNTIME_FAILURE = 1;

/** The stable codes of failures that tell the operator what to run instead. */
export type CommandFailureCode = 'lease-expired' | 'backing-off';

/** A failure the command reports in one line on stderr, after its code when it has one, exiting with code 1. */
export class CommandFailure extends Error {
  constructor(
    message: string,
    readonly code?: CommandFailureCode,
  ) {
    super(message);
  }
}

/** Adds `name` to `program` with `--database-url` and `--json`. */
export function databaseCommand(program: Command, name: string): Command {
  return program
    .command(name)
    .option(
      '--database-url <url>',
      'PostgreSQL URL, like postgres://user:password@host:5432/database (default: $DATABASE_URL)',
    )
    .option('--json', 'print the result as JSON');
}

/**
 * Opens a node-postgres pool on the command's database, runs `work` and
 * closes the pool. Failures become one line on stderr and exit code 1; a
 * missing URL is a usage error (exit code 2).
 */
export async function withDatabase(
  command: Command,
  flags: DatabaseFlags,
  work: (database: SqlDatabase<SqlClient>) => Promise<void>,
): Promise<void> {
  const url = databaseUrl(command, flags);
  let pool: pg.Pool | undefined;
  try {
    await reportFailures(command, async () => {
      const { Pool } = await loadPg();
      pool = new Pool({
        connectionString: url,
        max: 4,
        connectionTimeoutMillis: 10_000,
        application_name: `retrysafe ${command.name()}`,
      });
      // An idle connection that breaks must not crash the command; the next query reports it.
      pool.on('error', () => {});
      await work(portable(fromPg(pool)));
    });
  } finally {
    await pool?.end().catch(() => undefined);
  }
}

/** Runs `work`; a failure becomes one line on stderr, after its code when it has one, and exit code 1. */
export async function reportFailures(command: Command, work: () => Promise<void>): Promise<void> {
  try {
    await work();
  } catch (error) {
    const code = error instanceof CommandFailure && error.code !== undefined ? `${error.code}: ` : '';
    printError(`retrysafe ${command.name()}: ${code}${missingSchema(error) ? MISSING_SCHEMA : describeError(error)}\n`);
    process.exitCode = RUNTIME_FAILURE;
  }
}

/** node-postgres is an optional peer: only the commands that connect load it, so `retrysafe schema` runs without it. */
async function loadPg(): Promise<typeof pg> {
  try {
    return (await import('pg')).default;
  } catch (error) {
    if (error instanceof Error && 'code' in error && error.code === 'ERR_MODULE_NOT_FOUND') {
      throw new CommandFailure(
        'this command connects with node-postgres, an optional peer that is not installed: run "npm install pg".',
      );
    }
    throw error;
  }
}

/** Schemes node-postgres reads as a connection URL. */
const POSTGRES_SCHEMES = new Set(['postgres:', 'postgresql:']);

const MISSING_SCHEMA =
  'the retrysafe tables are missing from this database; run "retrysafe migrate" with the same database URL first.';

/**
 * The URL from `--database-url`, else `DATABASE_URL`. Anything but a
 * PostgreSQL URL is a usage error: node-postgres would read it as a host name
 * or a user name and fail later with a message about neither. The value is
 * never echoed, since it may hold a password.
 */
function databaseUrl(command: Command, flags: DatabaseFlags): string {
  const source = flags.databaseUrl === undefined ? 'DATABASE_URL' : '--database-url';
  const url = flags.databaseUrl ?? process.env.DATABASE_URL;
  if (url === undefined || url === '')
    return usageError(command, 'no database: set DATABASE_URL or pass --database-url <url>.');
  const scheme = URL.canParse(url) ? new URL(url).protocol : undefined;
  if (scheme !== undefined && POSTGRES_SCHEMES.has(scheme)) return url;
  const given = scheme === undefined ? 'not a URL' : `scheme ${scheme}`;
  return usageError(
    command,
    `${source} is not a PostgreSQL URL (${given}); expected one like postgres://user:password@host:5432/database.`,
  );
}

/** Whether a failure, or any of its causes, is PostgreSQL saying a table does not exist. */
function missingSchema(error: unknown): boolean {
  for (let current = error; current !== undefined; current = current instanceof Error ? current.cause : undefined) {
    if (sqlState(current) === UNDEFINED_TABLE) return true;
  }
  return false;
}

/** Writes the result: `json` with `--json`, otherwise `text`. */
export function output(flags: DatabaseFlags, json: unknown, text: string): void {
  print(flags.json === true ? `${JSON.stringify(json, null, 2)}\n` : text.endsWith('\n') ? text : `${text}\n`);
}

/** Stops the command with a usage error: one line on stderr, exit code 2. */
export function usageError(command: Command, message: string): never {
  return command.error(`error: ${message}`, { exitCode: USAGE_ERROR, code: 'retrysafe.usage' });
}

/** An error and its causes on one line, without a stack trace. */
export function describeError(error: unknown): string {
  const parts: string[] = [];
  for (
    let current = error;
    current !== undefined && parts.length < 4;
    current = current instanceof Error ? current.cause : undefined
  ) {
    parts.push(messageOf(current).replace(/\s+/g, ' ').replace(/\.$/, ''));
  }
  return `${parts.filter((part) => part !== '').join(': ')}.`;
}

function messageOf(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  // node-postgres reports a host with several addresses as an AggregateError with no message.
  if (error.message === '' && error instanceof AggregateError)
    return error.errors.map(messageOf).find((m) => m !== '') ?? error.name;
  if (error.message === '' && 'code' in error && typeof error.code === 'string') return error.code;
  return error.message;
}

/** How commands name an operation in their output. */
export function identityLabel(identity: OperationIdentity): string {
  return `${identity.tenant} / ${identity.operation} / ${identity.key}`;
}

/** A page of the operator store holds 1 to 1000 rows. */
export const PAGE_LIMIT = operationQueryRules.limit;

/** An age in whole seconds, as SQL compares it with a claim time. */
export const OLDER_THAN = operationQueryRules.olderThanSeconds;

/** A commander parser for a number flag; it carries its rule, so that the flag's range can be read back. */
export type NumberFlag = ((value: string) => number) & { readonly rule: NumberRule };

/** A commander parser for a number within `rule`, written in decimal digits. */
export function numberFlag(rule: NumberRule): NumberFlag {
  const parse = (value: string): number => {
    if (!/^\d+(?:\.\d+)?$/.test(value) || !fits(Number(value), rule))
      throw new InvalidArgumentError(`expected ${rangeOf(rule)}.`);
    return Number(value);
  };
  return Object.assign(parse, { rule });
}
