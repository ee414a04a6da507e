import { openWith, type SqlClient, type SqlDatabase, type Statement } from '../../store/sql-client.js';
import { extend } from '../../core/extend.js';
import { checkOptions } from '../../core/option-rules.js';
import { prismaTransactionRules } from '../data-layer-limits.js';

/** The members of a Prisma client or interactive transaction client that retrysafe calls. */
export interface PrismaQueryable {
  $queryRawUnsafe<Row = unknown>(query: string, ...values: unknown[]): PromiseLike<Row>;
  $executeRawUnsafe(query: string, ...values: unknown[]): PromiseLike<number>;
}

/** An interactive transaction's time limits, as Prisma takes them. */
export interface PrismaTransactionOptions {
  /** How long to wait for a connection from the pool. Prisma's default is 2000. */
  readonly maxWait?: number;
  /**
   * How long the whole transaction may take before Prisma rolls it back.
   * Default 20000 here (Prisma's own is 5000): it must exceed retrysafe's
   * `lockTimeoutMs + 2 × storeTimeoutMs` (13000 by default), and the rest is
   * the handler's.
   */
  readonly timeout?: number;
}

/** The members of a `PrismaClient` (Prisma 7, with a driver adapter such as `@prisma/adapter-pg`) that retrysafe calls. */
export interface PrismaLike<Tx extends PrismaQueryable> extends PrismaQueryable {
  $transaction<T>(
    work: (tx: Tx) => Promise<T>,
    options: PrismaTransactionOptions & { readonly isolationLevel: 'ReadCommitted' },
  ): PromiseLike<T>;
}

/**
 * A Prisma client as a retrysafe database. Route handlers receive Prisma's
 * interactive transaction client. Prisma ends an interactive transaction after
 * `timeout` ms, counted from its start: the claim's lock wait, the handler and
 * the completion must all fit (see `transactionTimeoutMs`).
 */
export function fromPrisma<Tx extends PrismaQueryable>(
  prisma: PrismaLike<Tx>,
  options: PrismaTransactionOptions = {},
): SqlDatabase<Tx> {
  checkOptions(prismaTransactionRules, options);
  const limits = extend(options, { timeout: options.timeout ?? DEFAULT_TIMEOUT_MS });
  // Prisma's driver adapters send it as SET TRANSACTION after BEGIN, one round trip more.
  const settings = extend(limits, { isolationLevel: 'ReadCommitted' as const });
  return {
    transaction: async (work, opening) =>
      prisma.$transaction((tx) => openWith(prismaRunner(tx), tx, work, opening), settings),
    runner: prismaRunner,
    query: prismaRunner(prisma).query,
    transactionTimeoutMs: limits.timeout,
  };
}

const DEFAULT_TIMEOUT_MS = 20_000;

/** retrysafe's statement runner over a Prisma interactive transaction, for `enqueue(prismaRunner(tx), …)`. */
export function prismaRunner(target: PrismaQueryable): SqlClient {
  return {
    async query<Row>(text: string | Statement, values?: readonly unknown[]) {
      const rows = await target.$queryRawUnsafe<Row[]>(typeof text === 'string' ? text : text.text, ...(values ?? []));
      return { rows };
    },
    async exec(script: string) {
      await target.$executeRawUnsafe(script);
    },
  };
}
