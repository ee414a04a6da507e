import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ServiceProcess, startProcess } from '../../examples/orders/testing/child.js';
import { call } from '../../examples/orders/testing/http.js';
import { type Cluster, createCluster } from './support/cluster.js';
import { cartKeys, expectOrdersSettled } from './support/order-checks.js';
import { afterFinals, placeOrder, putCarts, storm } from './support/storm.js';

const KEYS = 80;

describe('the database restarted, and the service backends terminated, mid-storm', () => {
  let cluster: Cluster & { dispose(): Promise<void> };
  let dataDir: string;
  const services: ServiceProcess[] = [];
  beforeAll(async () => {
    cluster = await createCluster('restart');
    dataDir = await mkdtemp(join(tmpdir(), 'orders-restart-'));
  });
  afterAll(async () => {
    await Promise.all(services.map((service) => service.kill('SIGKILL')));
    await cluster?.dispose();
    await rm(dataDir, { recursive: true, force: true });
  });

  async function stormWith(name: string, fault: () => Promise<void>): Promise<void> {
    await cluster.query(`CREATE DATABASE ${name}`);
    const service = await startProcess({ DATABASE_URL: cluster.url(name), DATA_DIR: join(dataDir, name) });
    services.push(service);
    const keyOf = cartKeys(name, KEYS);
    await putCarts(service.url, [...keyOf.values()]);
    const running = storm({
      services: () => [service.url],
      keys: [...keyOf.keys()],
      clientsPerKey: 2,
      spreadMs: 4_000,
      settleWithinMs: 60_000,
      send: (to, key) => placeOrder(to, keyOf.get(key) ?? '', key),
    });
    await afterFinals(running, KEYS / 4);
    await fault();
    const histories = await running.done;
    await expectOrdersSettled(
      service,
      keyOf,
      histories,
      async (sql) => (await cluster.query<{ n: number }>(sql, [], name))[0]?.n,
    );
    expect((await call(service.url, 'GET', '/healthz')).status).toBe(200);
  }

  it('pg_ctl restart: the service stays up, answers 503 with Retry-After meanwhile, and settles', async () => {
    await stormWith('orders_restart', () => cluster.restart());
  });

  it('pg_terminate_backend of every service backend, five times: the service stays up and settles', async () => {
    await stormWith('orders_terminate', async () => {
      for (let round = 0; round < 5; round += 1) {
        await cluster.query(
          'SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()',
          ['orders_terminate'],
        );
        await sleep(300);
      }
    });
  });
});
