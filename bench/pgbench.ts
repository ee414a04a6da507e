import { execFile, type PromiseWithChild } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { INSERT_ORDER as SERVICE_INSERT_ORDER, LOCK_CART } from '../examples/orders/data/queries.js';
import { CLAIM_ATOMIC } from '../src/postgres/sql/claim-atomic.js';
import { READ_RECORD } from '../src/postgres/sql/read-record.js';
import { ENQUEUE } from '../src/postgres/sql/outbox.js';
import { COMPLETE_ATOMIC } from '../src/postgres/sql/complete-atomic.js';
import type { CeilingPlan } from './ceiling/result.js';
import { supervise } from './child-process.js';
import {
  claimValues,
  completeValues,
  finishedValues,
  FINISHED_RECORD,
  KEY_ROW,
  LOCK_IDENTITY,
  lockValues,
  PLAIN_LOCK,
} from './ceiling/statements.js';
import { type LatencySummary, summariseLatencies } from './latency.js';
import { ORDER_BODY, TENANT } from './request.js';
import { INSERT_ORDER, type OrderInput } from './server/orders.js';
import { SERVICE_TENANT } from './server/service.js';

const execFileAsync = promisify(execFile);

/** pgbench under the bench's supervision: a run cut short does not leave it loading the database. */
function run(file: string, args: readonly string[]): PromiseWithChild<{ stdout: string; stderr: string }> {
  const running = execFileAsync(file, args);
  supervise(running.child);
  return running;
}

export interface PgbenchResult {
  readonly transactions: number;
  readonly seconds: number;
  readonly latency: LatencySummary;
}

export async function hasPgbench(): Promise<boolean> {
  return run('pgbench', ['--version']).then(
    () => true,
    () => false,
  );
}

/**
 * The same ceilings as the Node loop, driven by pgbench: the exact text of
 * retrysafe's claim and completion (or of the order INSERT), with their `$n`
 * turned into pgbench variables, sent as bound parameters of prepared
 * statements (`-M prepared`).
 */
export async function pgbenchCeiling(
  plan: PgbenchShape,
  databaseUrl: string,
  clients: number,
  warmupSeconds: number,
  seconds: number,
): Promise<PgbenchResult> {
  return withScript(plan, clients, async (common, dir) => {
    await run('pgbench', [...common, '-T', String(Math.max(1, Math.round(warmupSeconds))), databaseUrl]);
    const prefix = join(dir, 'log');
    const { stdout } = await run('pgbench', [
      ...common,
      '-T',
      String(Math.round(seconds)),
      '-l',
      `--log-prefix=${prefix}`,
      databaseUrl,
    ]);
    const latencies: number[] = [];
    for (const file of (await readdir(dir)).filter((name) => name.startsWith('log'))) {
      // Each line: client, transaction, latency in µs, script, epoch seconds, µs.
      for (const line of (await readFile(join(dir, file), 'utf8')).split('\n')) {
        const micros = Number(line.split(' ')[2]);
        if (Number.isFinite(micros) && line !== '') latencies.push(micros / 1000);
      }
    }
    const transactions = Number(
      /number of transactions actually processed: (\d+)/.exec(stdout)?.[1] ?? latencies.length,
    );
    const measured = Number(/duration: (\d+) s/.exec(stdout)?.[1] ?? seconds);
    return { transactions, seconds: measured, latency: summariseLatencies(latencies) };
  });
}

/**
 * `transactions` of `plan` on one connection (`-c 1`, so one backend serves
 * them all); resolves to pgbench's rate, in transactions per second.
 */
export async function pgbenchCount(plan: PgbenchShape, databaseUrl: string, transactions: number): Promise<number> {
  return withScript(plan, 1, async (common) =>
    pgbenchRate((await run('pgbench', [...common, '-t', String(transactions), databaseUrl])).stdout),
  );
}

/** The rate pgbench prints, without the time it took to connect. */
export function pgbenchRate(stdout: string): number {
  const rate = /^tps = ([\d.]+) \(without initial connection time\)$/m.exec(stdout)?.[1];
  if (rate === undefined) throw new Error(`pgbench printed no rate:\n${stdout}`);
  return Number(rate);
}

/** The pgbench arguments that run `plan`'s script, written to a directory of its own for `work`. */
async function withScript<T>(
  plan: PgbenchShape,
  clients: number,
  work: (common: readonly string[], dir: string) => Promise<T>,
): Promise<T> {
  const dir = await mkdtemp(join(tmpdir(), 'retrysafe-pgbench-'));
  try {
    const script = join(dir, `${plan}.sql`);
    await writeFile(script, SCRIPTS[plan].script);
    return await work(
      ['-n', '-M', 'prepared', '-c', String(clients), '-j', '1', '-f', script, ...SCRIPTS[plan].variables],
      dir,
    );
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** The script pgbench runs for `plan`, and its `-D` definitions. */
export const pgbenchScript = (plan: PgbenchShape): { readonly script: string; readonly variables: readonly string[] } =>
  SCRIPTS[plan];

/**
 * `$n` becomes `:<prefix>n`, except the key, which pgbench draws at random for every transaction, and a value of
 * `values` that is null, which is written as NULL: a `-D` definition can only hold text.
 */
const withVariables = (sql: string, prefix: string, keyAt: number, values: readonly unknown[] = []): string =>
  sql
    .trim()
    .replace(/\$(\d+)/g, (_, n: string) =>
      Number(n) === keyAt ? ':key' : values[Number(n) - 1] === null ? 'NULL' : `:${prefix}${n}`,
    );

/** Bound values as pgbench `-D` text, bytes in PostgreSQL's hex form; the key and nulls (written as NULL) are left out. */
const variables = (prefix: string, values: readonly unknown[], keyAt: number): string[] =>
  values.flatMap((value, index) =>
    index + 1 === keyAt || value === null ? [] : ['-D', `${prefix}${index + 1}=${definition(value)}`],
  );

/** A bound value as PostgreSQL reads its text: bytes in hex form, anything else as JSON would spell it. */
const definition = (value: unknown): string =>
  value instanceof Uint8Array
    ? `\\x${Buffer.from(value).toString('hex')}`
    : typeof value === 'string'
      ? value
      : JSON.stringify(value);

const order = JSON.parse(ORDER_BODY) as OrderInput;
const DRAW_KEY = '\\set key random(1, 1000000000000000)';

/**
 * The transactions pgbench drives: the Node loop's plans, and the shapes a
 * new key's transaction could take, each with the order INSERT, so that each
 * one's rate over `bare-insert`'s is the most B/A can be with that shape.
 */
export type PgbenchShape =
  | CeilingPlan
  /** BEGIN, the order INSERT, the finished record written once with ON CONFLICT DO NOTHING, COMMIT. */
  | 'insert-record'
  /** The same, after a transaction-scoped advisory lock on the identity, taken in a statement that reads the record. */
  | 'lock-insert-record'
  /** The same, with the lock sent in one pipeline with BEGIN and the record in one with COMMIT. */
  | 'pipelined-lock-insert-record'
  /** The reference service's order (scenario R-A): BEGIN, the cart locked, the order INSERT, the outbox message, COMMIT. */
  | 'service-order'
  /** The same with retrysafe's claim sent with BEGIN and its completion with COMMIT, as R-B sends it. */
  | 'service-claim-order-complete'
  /** B's transaction pipelined, as node-postgres sent it until 2026-12-07: the claim in one pipeline with BEGIN, the order INSERT, the completion in one with COMMIT. */
  | 'pipelined-claim-insert-complete'
  /** BEGIN, the order INSERT, one more row with only its key (`bench_keys`) sent with COMMIT: the least any record adds. */
  | 'insert-key-row'
  /** The same with the identity's advisory lock, as plain SQL, sent with BEGIN. */
  | 'lock-insert-key-row'
  /** A replay as retrysafe sends it: the one read of an existing record, no transaction. */
  | 'read-record';

/** Records of keys `1` … that `read-record` reads, one drawn at random per transaction; `recordValues` gives each one's values. */
export const PGBENCH_RECORDS = { count: 1000 } as const;

/** Carts `cart0` … that the service shapes lock, one drawn at random per transaction. */
export const PGBENCH_CARTS = { prefix: 'cart', count: 20_000 } as const;

const orderInsert = `${withVariables(INSERT_ORDER, 'i', 4)};`;
const orderVariables = variables('i', [TENANT, order.sku, order.quantity, ''], 4);
const lockStatement = `${withVariables(LOCK_IDENTITY, 'l', 3)};`;
const recordStatement = `${withVariables(FINISHED_RECORD, 'f', 3)};`;
const recordVariables = [...variables('l', lockValues(''), 3), ...variables('f', finishedValues(''), 3)];

/** `sql` with each `$n` that `fixed` names replaced by its text, then the others made variables as `withVariables` does. */
const withFixed = (sql: string, prefix: string, fixed: Readonly<Record<number, string>>): string =>
  withVariables(
    sql.replace(/\$(\d+)/g, (match, n: string) => fixed[Number(n)] ?? match),
    prefix,
    0,
  );

const KEY_TEXT = 'CAST(:key AS text)';
const serviceLines = [
  { sku: 'GADGET-2', qty: 1, unit_price_cents: 4999 },
  { sku: 'WIDGET-1', qty: 2, unit_price_cents: 1299 },
];
const serviceOrder = [
  `${withFixed(LOCK_CART, 's', { 2: `'${PGBENCH_CARTS.prefix}' || CAST(:cart AS text)` })};`,
  `${withFixed(SERVICE_INSERT_ORDER, 'o', { 2: `'ord_' || lpad(${KEY_TEXT}, 16, '0')`, 3: KEY_TEXT })};`,
  `${withFixed(ENQUEUE, 'e', { 1: `md5(${KEY_TEXT})::uuid` })};`,
].join('\n');
const serviceVariables = [
  '-D',
  `s1=${SERVICE_TENANT}`,
  ...variables('o', [SERVICE_TENANT, '', '', 1, 'standard', JSON.stringify(serviceLines), 7597], 0).filter(
    (_, index) => index < 2 || index > 5,
  ),
  ...variables(
    'e',
    [
      '',
      'order.created',
      '{}',
      JSON.stringify({ order_id: 'ord_0000000000000001', tenant: SERVICE_TENANT, total_cents: 7597 }),
    ],
    0,
  ).slice(2),
];
const claimStatement = `${withVariables(CLAIM_ATOMIC.text, 'c', 3, claimValues(''))};`;
const completeStatement = `${withVariables(COMPLETE_ATOMIC.text, 'u', 3, completeValues(''))};`;
const claimVariables = variables('c', claimValues(''), 3);
const completeVariables = variables('u', completeValues(''), 3);
/** Statements sent in one write, their answers read together: pgbench's pipeline mode. */
const pipelined = (...statements: string[]): string => ['\\startpipeline', ...statements, '\\endpipeline'].join('\n');
const DRAW_CART = `\\set cart random(0, ${PGBENCH_CARTS.count - 1})`;
const keyRowStatement = `${withVariables(KEY_ROW, 'k', 3)};`;
const keyRowVariables = variables('k', lockValues(''), 3);
const plainLockStatement = `${withVariables(PLAIN_LOCK, 'p', 3)};`;
const plainLockVariables = variables('p', lockValues(''), 3);

const SCRIPTS: Record<PgbenchShape, { readonly script: string; readonly variables: readonly string[] }> = {
  'claim-complete': {
    script: `${DRAW_KEY}\nBEGIN;\n${claimStatement}\n${completeStatement}\nCOMMIT;\n`,
    variables: [...claimVariables, ...completeVariables],
  },
  'claim-insert-complete': {
    script: `${DRAW_KEY}\nBEGIN;\n${claimStatement}\n${orderInsert}\n${completeStatement}\nCOMMIT;\n`,
    variables: [...claimVariables, ...orderVariables, ...completeVariables],
  },
  'bare-insert': {
    script: `${DRAW_KEY}\nBEGIN;\n${orderInsert}\nCOMMIT;\n`,
    variables: orderVariables,
  },
  'insert-record': {
    script: `${DRAW_KEY}\nBEGIN;\n${orderInsert}\n${recordStatement}\nCOMMIT;\n`,
    variables: [...orderVariables, ...variables('f', finishedValues(''), 3)],
  },
  'lock-insert-record': {
    script: `${DRAW_KEY}\nBEGIN;\n${lockStatement}\n${orderInsert}\n${recordStatement}\nCOMMIT;\n`,
    variables: [...orderVariables, ...recordVariables],
  },
  'pipelined-lock-insert-record': {
    script: `${DRAW_KEY}\n${pipelined('BEGIN;', lockStatement)}\n${orderInsert}\n${pipelined(recordStatement, 'COMMIT;')}\n`,
    variables: [...orderVariables, ...recordVariables],
  },
  'pipelined-claim-insert-complete': {
    script: `${DRAW_KEY}\n${pipelined('BEGIN;', claimStatement)}\n${orderInsert}\n${pipelined(completeStatement, 'COMMIT;')}\n`,
    variables: [...claimVariables, ...orderVariables, ...completeVariables],
  },
  'insert-key-row': {
    script: `${DRAW_KEY}\nBEGIN;\n${orderInsert}\n${pipelined(keyRowStatement, 'COMMIT;')}\n`,
    variables: [...orderVariables, ...keyRowVariables],
  },
  'lock-insert-key-row': {
    script: `${DRAW_KEY}\n${pipelined('BEGIN;', plainLockStatement)}\n${orderInsert}\n${pipelined(keyRowStatement, 'COMMIT;')}\n`,
    variables: [...plainLockVariables, ...orderVariables, ...keyRowVariables],
  },
  'read-record': {
    script: `\\set key random(1, ${PGBENCH_RECORDS.count})\n${withVariables(READ_RECORD.text, 'r', 3)};\n`,
    variables: variables('r', lockValues(''), 3),
  },
  'service-order': {
    script: `${DRAW_KEY}\n${DRAW_CART}\nBEGIN;\n${serviceOrder}\nCOMMIT;\n`,
    variables: serviceVariables,
  },
  'service-claim-order-complete': {
    script: `${DRAW_KEY}\n${DRAW_CART}\n${pipelined('BEGIN;', claimStatement)}\n${serviceOrder}\n${pipelined(completeStatement, 'COMMIT;')}\n`,
    variables: [...serviceVariables, ...claimVariables, ...completeVariables],
  },
};
