/**
 * Measures what the replay cache really holds: run with `node --expose-gc --import tsx`, DATABASE_URL a migrated
 * database. It commits RECORDS finished records (HEADERS headers, BODY_BYTES bytes of body each), reads each
 * through a cache bounded to BYTES bytes with a fresh identity as a request would bring, and prints one JSON line:
 * how many entries it kept and the heap they held, measured as the memory freed when the cache is let go.
 */
import pg from 'pg';
import { fingerprint } from '../../../src/core/fingerprint.js';
import type { OperationIdentity } from '../../../src/core/identity.js';
import { defaultRetention } from '../../../src/core/retention.js';
import { fromPg, postgresStore } from '../../../src/postgres/index.js';
import { type ReplayCache, replayCached } from '../../../src/store/replay-cache.js';

const gc = globalThis.gc;
if (gc === undefined) throw new Error('Run with --expose-gc.');
const setting = (name: string, fallback: number) => Number(process.env[name] ?? fallback);
const records = setting('RECORDS', 4000);
const bytes = setting('BYTES', 2 ** 21);
const headerCount = setting('HEADERS', 1);
const body = 'x'.repeat(setting('BODY_BYTES', 16));
const operation = 'orders.create@1';

/** The strings a request brings: fresh ones, read off the wire, as an HTTP parser makes them. */
const identity = (i: number): OperationIdentity => ({
  tenant: Buffer.from(`tenant-${i % 10}`).toString('latin1'),
  operation,
  key: Buffer.from(`00000000-0000-4000-8000-${String(i).padStart(12, '0')}`).toString('latin1'),
});

/** Values of their own per record, as a Location is: V8 shares the strings JSON.parse reads of 10 characters or fewer. */
const headersOf = (i: number) =>
  Object.fromEntries(
    Array.from({ length: headerCount }, (_, h) => [`x-header-${h}`, `/orders/${String(i).padStart(12, '0')}/${h}`]),
  );

const held = () => {
  for (let i = 0; i < 4; i += 1) gc();
  const { heapUsed, arrayBuffers } = process.memoryUsage();
  return heapUsed + arrayBuffers;
};

const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 20 });
const database = fromPg(pool);
for (let i = 0; i < records; i += 20) {
  await Promise.all(
    Array.from({ length: Math.min(20, records - i) }, (_, j) =>
      postgresStore(database).atomic(
        { identity: identity(i + j), fingerprint: fingerprint({ n: i + j }), lockTimeoutMs: 5000 },
        () =>
          Promise.resolve({
            commit: true,
            value: undefined,
            completion: {
              state: 'completed',
              reply: { status: 201, headers: headersOf(i + j), body: Buffer.from(body) },
              retention: defaultRetention,
            },
          }),
        () => {
          throw new Error('The identity was taken meanwhile.');
        },
      ),
    ),
  );
}

const tick = () => new Promise((resolve) => setTimeout(resolve, 10));
/** Reads every record through a new cache; the caller lets it go by emptying `caches`. */
const filled = async (caches: ReplayCache<unknown>[]) => {
  const cache = replayCached(postgresStore(database), { bytes, entries: 10 * records });
  caches.push(cache);
  for (let i = 0; i < records; i += 1) await cache.store.read(identity(i));
  let kept = 0;
  for (let i = 0; i < records; i += 1) if (cache.recall(identity(i)) !== undefined) kept += 1;
  return kept;
};
const caches: ReplayCache<unknown>[] = [];
// A first pass warms the driver and the statements, so that the second one leaves only what the cache keeps.
await filled(caches);
caches.pop();
await tick();
const before = held();
const kept = await filled(caches);
await tick();
const withCache = held();
caches.pop();
await tick();
const without = held();
await pool.end();
console.log(
  JSON.stringify({
    records,
    bytes,
    headers: headerCount,
    bodyBytes: body.length,
    kept,
    grown: withCache - before,
    freed: withCache - without,
    perEntry: Math.round((withCache - without) / kept),
  }),
);
