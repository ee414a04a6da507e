import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fromPg, portable } from 'retrysafe/postgres';
import { createTestDatabase, type TestDatabase } from '../../../test/support/database.js';
import { type SlowProxy, startSlowProxy } from '../../../test/support/slow-proxy.js';
import { HEALTH_CHECK_TIMEOUT_MS } from './health.js';
import { prepareDatabase } from '../data/schema.js';
import { call, json } from '../testing/http.js';
import { type RunningService, startService } from '../testing/service.js';
import { waitFor } from '../../../test/support/wait-for.js';

const PROBLEMS = 'https://retrysafe.dev/examples/orders/problems/';
/** Far longer than the health check's bound: the probe must give up on the database, not wait for it. */
const STALL_MS = 20_000;

describe('/healthz while the database stalls (statements hang, connections stay open)', () => {
  let db: TestDatabase;
  let proxy: SlowProxy;
  let pool: pg.Pool;
  let service: RunningService;
  beforeAll(async () => {
    db = await createTestDatabase();
    const target = new URL(db.url);
    proxy = await startSlowProxy({ host: target.hostname, port: Number(target.port) });
    const through = new URL(db.url);
    through.port = String(proxy.port);
    pool = new pg.Pool({ connectionString: through.toString(), max: 4 });
    pool.on('error', () => {});
    const database = portable(fromPg(pool));
    await prepareDatabase(database);
    service = await startService(database);
  });
  afterAll(async () => {
    proxy.resume();
    await service.close();
    await pool.end();
    await proxy.close();
    await db.drop();
  });

  it(`answers 503 naming the database check, long before the stall ends (bound: ${HEALTH_CHECK_TIMEOUT_MS} ms)`, async () => {
    expect(HEALTH_CHECK_TIMEOUT_MS).toBeLessThan(STALL_MS / 4);
    proxy.stall();
    const resumed = setTimeout(() => proxy.resume(), STALL_MS);
    try {
      const answered = await Promise.race([
        call(service.url, 'GET', '/healthz'),
        new Promise<'stall-ended'>((resolve) => setTimeout(() => resolve('stall-ended'), STALL_MS - 1_000)),
      ]);
      if (answered === 'stall-ended') throw new Error('/healthz waited for the stalled database.');
      expect(answered.status).toBe(503);
      expect(answered.headers['retry-after']).toBe('1');
      expect(json(answered)).toMatchObject({
        type: `${PROBLEMS}database-unavailable`,
        checks: { database: 'timed-out', schema: 'ok' },
      });
    } finally {
      clearTimeout(resumed);
      proxy.resume();
    }
    // The pool's connections drain what queued during the stall first; the check has its own bound meanwhile.
    await waitFor(async () => (await call(service.url, 'GET', '/healthz')).status === 200, {
      what: '/healthz to answer 200 once the database answers again',
    });
  }, 40_000);
});
