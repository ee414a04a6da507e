import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { providerAdmin } from '../../examples/provider/client.js';
import { type Provider, startProvider } from '../../examples/provider/provider.js';
import { type ServiceProcess, startProcess } from '../../examples/orders/testing/child.js';
import { call, type HttpAnswer, json } from '../../examples/orders/testing/http.js';
import { downstreamKey } from '../../src/modes/downstream-key.js';
import { type Cluster, createCluster } from './support/cluster.js';
import { cartKeys, expectOrdersSettled } from './support/order-checks.js';
import { afterFinals, placeOrder, putCarts, storm, successesByKey, unexpectedAnswers } from './support/storm.js';
import { waitFor } from '../support/wait-for.js';

const ORDER_KEYS = 45;
/** Payments sent to the process that is killed, and to no other until the survivors' recovery workers have finished them. */
const STRANDED = 6;
const PAYMENTS = 30;
/** Every charge takes this long at the provider, so that the storm's payments are in flight when a process dies. */
const CHARGE_MS = 2_000;

describe('three service processes on one database, one killed with SIGKILL mid-storm', () => {
  let cluster: Cluster & { dispose(): Promise<void> };
  let provider: Provider;
  let dataDir: string;
  const services: ServiceProcess[] = [];
  beforeAll(async () => {
    cluster = await createCluster('processes');
    await cluster.query('CREATE DATABASE orders');
    provider = await startProvider({ faults: [{ mode: 'delay', ms: CHARGE_MS, times: 100_000 }] });
    dataDir = await mkdtemp(join(tmpdir(), 'orders-processes-'));
  });
  afterAll(async () => {
    await Promise.all(services.map((service) => service.kill('SIGKILL')));
    await provider?.close();
    await cluster?.dispose();
    await rm(dataDir, { recursive: true, force: true });
  });

  it('leaves one order per key and one charge per payment, the survivors finishing the dead one’s leases', async () => {
    // One after another: each applies the migrations at start.
    for (const name of ['p0', 'p1', 'p2']) {
      services.push(
        await startProcess({
          DATABASE_URL: cluster.url('orders'),
          PROVIDER_URL: provider.url,
          DATA_DIR: join(dataDir, name),
        }),
      );
    }
    const [doomed, ...survivors] = services.map((service) => service.url) as [string, string, string];
    const count = async (sql: string, values: unknown[] = []) =>
      (await cluster.query<{ n: number }>(sql, values, 'orders'))[0]?.n;
    const admin = providerAdmin(provider.url);

    // Orders to pay, placed before the storm.
    const payKeys = cartKeys('pay', STRANDED + PAYMENTS);
    await putCarts(survivors[0], [...payKeys.values()]);
    const orderOf = new Map<string, string>();
    for (const [key, cart] of payKeys) {
      const placed = await placeOrder(survivors[0], cart, `order-of-${key}`);
      expect(placed.status).toBe(201);
      orderOf.set(key, json(placed).id as string);
    }
    const pay = (to: string, key: string): Promise<HttpAnswer> =>
      call(to, 'POST', `/v1/orders/${orderOf.get(key) ?? ''}/payments`, { token: 'demo-a', key });
    const [stranded, spread] = [[...payKeys.keys()].slice(0, STRANDED), [...payKeys.keys()].slice(STRANDED)];

    const orderKeys = cartKeys('procs', ORDER_KEYS);
    await putCarts(survivors[0], [...orderKeys.values()]);
    let alive = [...services.map((service) => service.url)];
    const orders = storm({
      services: () => alive,
      keys: [...orderKeys.keys()],
      clientsPerKey: 2,
      spreadMs: 4_000,
      send: (to, key) => placeOrder(to, orderKeys.get(key) ?? '', key),
    });
    const payments = storm({
      services: () => alive,
      keys: spread,
      clientsPerKey: 2,
      spreadMs: 4_000,
      settleWithinMs: 150_000,
      send: pay,
    });
    // Held at the provider until the process that sent them is dead, however long the storm takes to get there.
    for (const key of stranded) await admin.control({ mode: 'hold', reference: orderOf.get(key) ?? '' });
    const strandedAttempts = stranded.map((key) => pay(doomed, key).catch((error: unknown) => error));
    await waitFor(async () => (await admin.stats()).held === STRANDED, {
      what: 'the stranded payments to be held at the provider',
    });
    await afterFinals(orders, ORDER_KEYS / 4);

    await services[0]?.kill('SIGKILL');
    alive = survivors;
    await admin.control({ mode: 'release' });
    await Promise.all(strandedAttempts);
    const [orderHistories, paymentHistories] = await Promise.all([orders.done, payments.done]);

    // Only the survivors' recovery workers can finish the stranded payments: no client sends them meanwhile.
    const strandedDone = `SELECT count(*)::int AS n FROM retrysafe_operations WHERE operation = 'payments.create@1' AND key = ANY($1) AND state = 'completed'`;
    await waitFor(async () => (await count(strandedDone, [stranded])) === STRANDED, {
      what: 'the recovery workers to finish the stranded payments',
      limitMs: 120_000,
    });
    expect(
      await count(`SELECT count(*)::int AS n FROM retrysafe_operations WHERE key = ANY($1) AND attempt > 1`, [
        stranded,
      ]),
    ).toBe(STRANDED);

    const [survivor] = services.slice(1);
    if (survivor === undefined) throw new Error('no survivor');
    await expectOrdersSettled(survivor, orderKeys, orderHistories, count, doomed);

    expect(unexpectedAnswers(paymentHistories, doomed)).toEqual([]);
    const seen = successesByKey(paymentHistories);
    for (const key of [...stranded, ...spread]) {
      const replay = await pay(survivors[1], key);
      expect(replay.status, key).toBe(201);
      expect(replay.headers['idempotent-replayed']).toBe('true');
      for (const body of seen.get(key) ?? []) expect(body.equals(replay.body)).toBe(true);
      expect(
        await admin.count(downstreamKey({ tenant: 'tenant-a', operation: 'payments.create@1', key }, 'charge')),
        `charges for ${key}`,
      ).toBe(1);
    }
    for (const key of spread) expect(seen.get(key)?.length ?? 0, key).toBeGreaterThan(0);
    expect(await count('SELECT count(*)::int AS n FROM payments')).toBe(STRANDED + PAYMENTS);
    expect(
      await count(
        'SELECT count(*)::int AS n FROM (SELECT order_id FROM payments GROUP BY order_id HAVING count(*) > 1) AS twice',
      ),
    ).toBe(0);
    expect(
      await count("SELECT count(*)::int AS n FROM retrysafe_operations WHERE state IN ('in_progress', 'unknown')"),
    ).toBe(0);
  });
});
