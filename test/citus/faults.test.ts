import { afterAll, beforeAll, expect, it } from 'vitest';
import { call, type HttpAnswer } from '../../examples/orders/testing/http.js';
import { distribute, fromPg, migrate, portable } from '../../src/postgres/index.js';
import type { Cluster } from '../faults/support/cluster.js';
import { afterFinals, type KeyHistory, storm, successesByKey, unexpectedAnswers } from '../faults/support/storm.js';
import { describeCitus, nodePool, sharedCitusCluster } from '../support/citus-cluster.js';
import { waitFor } from '../support/wait-for.js';
import { distributeWithRecords } from './citus-engine.js';
import { ORDERS_TABLE, type OrderApp, startOrderApp } from './order-app.js';

const TENANTS = 8;
const KEYS_PER_TENANT = 6;
/** Safety net only: a storm through a fault takes as long as the busy machine makes it. */
const STORM_LIMIT_MS = 600_000;

describeCitus('faults on Citus: a worker killed, the coordinator restarted, mid-storm', () => {
  const cluster = sharedCitusCluster();
  let app: OrderApp;
  beforeAll(async () => {
    const pool = nodePool(cluster().coordinator.url(), 2);
    try {
      const database = portable(fromPg(pool));
      await migrate(database);
      await distribute(database);
      await database.query(ORDERS_TABLE);
      await distributeWithRecords(database, 'orders');
    } finally {
      await pool.end();
    }
    app = await startOrderApp(cluster().coordinator.url());
  }, 300_000);
  afterAll(() => app?.close());

  /**
   * Orders for every tenant (both workers hold some) from two clients per key, each retrying 503 and 409 with
   * Retry-After; `fault` runs once a quarter of the keys have their answer and is told once a 503 came after it.
   */
  async function stormThrough(name: string, fault: (unavailable: () => Promise<void>) => Promise<void>) {
    const keys = Array.from({ length: TENANTS * KEYS_PER_TENANT }, (_, index) => `${name}-${index}`);
    const tenantOf = (key: string) => `tenant-${Number(key.split('-').pop()) % TENANTS}`;
    let unavailableAnswers = 0;
    const send = async (to: string, key: string): Promise<HttpAnswer> => {
      const answer = await call(to, 'POST', '/orders', { token: tenantOf(key), key, json: { sku: `sku-${key}` } });
      if (answer.status === 503 && answer.headers['retry-after'] !== undefined) unavailableAnswers += 1;
      return answer;
    };
    const running = storm({
      services: () => [app.url],
      keys,
      clientsPerKey: 2,
      spreadMs: 4_000,
      settleWithinMs: STORM_LIMIT_MS,
      send,
    });
    await afterFinals(running, keys.length / 4);
    const before = unavailableAnswers;
    await fault(() =>
      waitFor(() => unavailableAnswers > before, {
        what: 'a 503 with Retry-After during the fault',
        limitMs: STORM_LIMIT_MS,
      }),
    );
    const histories = await running.done;
    await expectSettled(keys, histories, send);
  }

  async function expectSettled(
    keys: readonly string[],
    histories: readonly KeyHistory[],
    send: (to: string, key: string) => Promise<HttpAnswer>,
  ) {
    expect(unexpectedAnswers(histories)).toEqual([]);
    const seen = successesByKey(histories);
    for (const key of keys) {
      const replay = await send(app.url, key);
      expect(replay.status, key).toBe(201);
      expect(replay.headers['idempotent-replayed']).toBe('true');
      for (const body of seen.get(key) ?? []) expect(body.equals(replay.body), key).toBe(true);
    }
    const orders = await cluster().coordinator.query<{ key: string; n: number }>(
      'SELECT key, count(*)::int AS n FROM orders WHERE key = ANY ($1) GROUP BY key',
      [keys],
    );
    expect(orders).toHaveLength(keys.length);
    expect(orders.filter((row) => row.n !== 1)).toEqual([]);
    const [left] = await cluster().coordinator.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM retrysafe_operations WHERE state = 'in_progress'",
    );
    expect(left?.n).toBe(0);
  }

  it(
    'a worker killed with SIGKILL and started again: 503 with Retry-After meanwhile, then one order and one answer per key',
    async () => {
      const [worker] = cluster().workers;
      await stormThrough('worker-killed', async (unavailable) => {
        await worker.kill();
        await unavailable();
        await worker.start();
      });
    },
    STORM_LIMIT_MS,
  );

  it(
    'the coordinator stopped and started again: 503 with Retry-After meanwhile, then one order and one answer per key',
    async () => {
      const { coordinator }: { coordinator: Cluster } = cluster();
      await stormThrough('coordinator-restarted', async (unavailable) => {
        await coordinator.stop();
        await unavailable();
        await coordinator.start();
      });
    },
    STORM_LIMIT_MS,
  );
});
