import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import type pg from 'pg';
import { uuidV7 } from '../src/client/uuid-v7.js';
import { CLAIM_ATOMIC } from '../src/postgres/sql/claim-atomic.js';
import { COMPLETE_ATOMIC } from '../src/postgres/sql/complete-atomic.js';
import { claimValues, completeValues } from './ceiling/statements.js';
import { ORDER_BODY, TENANT } from './request.js';
import type { KeyShape } from './scale.js';
import { INSERT_ORDER, type OrderInput } from './server/orders.js';

const order = JSON.parse(ORDER_BODY) as OrderInput;

/**
 * `INSERT … VALUES (…)` made into `INSERT … SELECT … FROM generate_series(1, $count)`:
 * the same columns and value expressions, many rows a statement, `$keyAt`
 * replaced by `keyExpression` (drawn per row). A `RETURNING` clause goes.
 */
export function bulkInsert(text: string, keyAt: number, keyExpression: string, countAt: number): string {
  const match = /^([\s\S]*?)\bVALUES\s*\(([\s\S]*)\)(\s+RETURNING\s[\s\S]*)?$/.exec(text.trim());
  if (match === null) throw new Error(`not an INSERT … VALUES: ${text}`);
  const [, head = '', values = ''] = match;
  const rows = values.replace(new RegExp(`\\$${keyAt}(?!\\d)`, 'g'), keyExpression);
  return `${head}SELECT ${rows} FROM generate_series(1, $${countAt}) AS i`;
}

/** A random key after the key's parameter, a prefix (empty here). */
const randomKey = (keyAt: number): string => `$${keyAt}::text || gen_random_uuid()::text`;
/**
 * retrysafe's completion INSERT, each row with a random key and its times a
 * microsecond after the row before's, as records that finished one after
 * another have them; $14 rows. Rows sharing one time would be walked by the
 * sweeper in key order, all over the statement's pages, where a service's
 * are walked in the order they were written.
 */
const FILL_RECORDS = bulkInsert(COMPLETE_ATOMIC.text, 3, randomKey(3), 14).replace(
  /make_interval\(secs => (\$\d+)\)/g,
  'make_interval(secs => $1 + i / 1000000.0)',
);
/** The bench's order INSERT, each row with a random key; $5 rows. */
const FILL_ORDERS = bulkInsert(INSERT_ORDER, 4, randomKey(4), 5);
const BATCH = 50_000;

/** Seconds from now to a record's response expiry and to its tombstone's. */
export interface Expiry {
  readonly responseSeconds: number;
  readonly tombstoneSeconds: number;
}

/** `count` completed records as the atomic completion writes them, and as many orders when `orders` is set. */
export async function fillRecords(client: pg.Client, count: number, expiry: Expiry, orders: boolean): Promise<void> {
  const values = completeValues('');
  values[10] = expiry.responseSeconds;
  values[11] = expiry.tombstoneSeconds;
  for (let done = 0; done < count; done += BATCH) {
    const rows = Math.min(BATCH, count - done);
    await client.query(FILL_RECORDS, [...values, rows]);
    if (orders) await client.query(FILL_ORDERS, [TENANT, order.sku, order.quantity, '', rows]);
  }
}

/** The bare endpoint's order records its key too, so its rows are the size of the filled ones. */
const newKey: Record<KeyShape, () => string> = { bare: randomUUID, v7: uuidV7, v4: randomUUID, 'v4-lz4': randomUUID };

/** One new key's transaction of `shape`, statement by statement; resolves to its ms. */
async function transaction(client: pg.Client, shape: KeyShape): Promise<number> {
  const started = performance.now();
  const key = newKey[shape]();
  const atomic = shape !== 'bare';
  await client.query('BEGIN');
  if (atomic) await client.query({ ...CLAIM_ATOMIC, values: claimValues(key) });
  await client.query(INSERT_ORDER, [TENANT, order.sku, order.quantity, key]);
  if (atomic) await client.query({ ...COMPLETE_ATOMIC, values: completeValues(key) });
  await client.query('COMMIT');
  return performance.now() - started;
}

/** `count` transactions back to back; resolves to their rate per second. */
export async function runKeys(client: pg.Client, shape: KeyShape, count: number): Promise<number> {
  const started = performance.now();
  for (let done = 0; done < count; done += 1) await transaction(client, shape);
  return (count * 1000) / (performance.now() - started);
}

/**
 * B's v7 transactions at `rate` a second, each started on its schedule (or
 * at once when the one before ran late), until `count` ran and `until`
 * (when given) has settled; resolves to their latencies in ms.
 */
export async function paceKeys(
  client: pg.Client,
  rate: number,
  count: number,
  until?: Promise<unknown>,
): Promise<number[]> {
  let settled = until === undefined;
  void until?.finally(() => {
    settled = true;
  });
  const latencies: number[] = [];
  const started = performance.now();
  for (let done = 0; done < count || !settled; done += 1) {
    const due = started + (done * 1000) / rate;
    // The load's own schedule: the next transaction starts at its time, as a client's request would arrive.
    if (due > performance.now()) await sleep(due - performance.now());
    latencies.push(await transaction(client, 'v7'));
  }
  return latencies;
}
