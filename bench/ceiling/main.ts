/**
 * The database's ceiling: the statements of one request, without HTTP,
 * driven by a tight loop of concurrent workers over a pg Pool for a fixed time.
 */
import { CLAIM_ATOMIC } from '../../src/postgres/sql/claim-atomic.js';
import { COMPLETE_ATOMIC } from '../../src/postgres/sql/complete-atomic.js';
import { summariseLatencies } from '../latency.js';
import { ORDER_BODY, TENANT } from '../request.js';
import { countedPool } from '../server/counted-pool.js';
import { createOrder, insertOrder, type OrderInput } from '../server/orders.js';
import { claimValues, completeValues } from './statements.js';
import { type CeilingMessage, isCeilingPlan } from './result.js';

const env = (name: string): string => {
  const value = process.env[name];
  if (value === undefined || value === '') throw new Error(`${name} is required`);
  return value;
};
const plan = env('BENCH_CEILING_PLAN');
if (!isCeilingPlan(plan)) throw new Error(`unknown plan ${plan}`);
const unnamed = process.env.BENCH_CEILING_UNNAMED === '1';
const { pool, roundTrips } = countedPool(
  env('BENCH_CEILING_DATABASE_URL'),
  Number(env('BENCH_CEILING_POOL_SIZE')),
  unnamed,
);
const workers = Number(env('BENCH_CEILING_WORKERS'));
const tag = env('BENCH_CEILING_TAG');
const order = JSON.parse(ORDER_BODY) as OrderInput;
let next = 0;
let unclaimed = 0;

async function claimAndComplete(key: string, withOrder: boolean): Promise<void> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    const { rows } = await client.query<{ found: boolean }>(CLAIM_ATOMIC, claimValues(key));
    if (rows[0]?.found !== false) unclaimed += 1;
    if (withOrder) await insertOrder(client, TENANT, order, key);
    await client.query(COMPLETE_ATOMIC, completeValues(key));
    await client.query('COMMIT');
  } finally {
    client.release();
  }
}

const once = (key: string): Promise<unknown> =>
  plan === 'bare-insert'
    ? createOrder(pool, TENANT, order, key)
    : claimAndComplete(key, plan === 'claim-insert-complete');

/** Runs every worker until `seconds` have passed; returns each transaction's latency in ms. */
async function drive(seconds: number, prefix: string): Promise<number[]> {
  const latencies: number[] = [];
  const end = performance.now() + seconds * 1000;
  await Promise.all(
    Array.from({ length: workers }, async () => {
      while (performance.now() < end) {
        const started = performance.now();
        await once(`${prefix}${next++}`);
        latencies.push(performance.now() - started);
      }
    }),
  );
  return latencies;
}

await drive(Number(env('BENCH_CEILING_WARMUP_SECONDS')), `${tag}-warm-`);
const cpuBefore = process.cpuUsage();
const tripsBefore = roundTrips();
const started = performance.now();
const latencies = await drive(Number(env('BENCH_CEILING_SECONDS')), `${tag}-k-`);
const seconds = (performance.now() - started) / 1000;
const cpu = process.cpuUsage(cpuBefore);
const message: CeilingMessage = {
  type: 'ceiling',
  result: {
    transactions: latencies.length,
    seconds,
    latency: summariseLatencies(latencies),
    cpuMicros: cpu.user + cpu.system,
    maxRssBytes: process.resourceUsage().maxRSS * 1024,
    roundTrips: roundTrips() - tripsBefore,
    unclaimed,
  },
};
await pool.end();
process.send?.(message, undefined, undefined, () => process.disconnect());
