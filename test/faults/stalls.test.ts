import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HEALTH_CHECK_TIMEOUT_MS } from '../../examples/orders/infrastructure/health.js';
import { type ServiceProcess, startProcess } from '../../examples/orders/testing/child.js';
import { call, type HttpAnswer } from '../../examples/orders/testing/http.js';
import { type SlowProxy, startSlowProxy } from '../support/slow-proxy.js';
import { type Cluster, createCluster } from './support/cluster.js';
import { cartKeys, expectOrdersSettled } from './support/order-checks.js';
import { placeOrder, putCarts, storm } from './support/storm.js';

/** The documented defaults: a store phase's budget, and the claim's extra wait behind a concurrent duplicate. */
const STORE_TIMEOUT_MS = 5_000;
const LOCK_TIMEOUT_MS = 3_000;
/** A keyed request is answered when the phase it is in runs out: at most the claim's budget. Asserted with double slack. */
const KEYED_BOUND_MS = 2 * (STORE_TIMEOUT_MS + LOCK_TIMEOUT_MS);
const HEALTH_BOUND_MS = 5 * HEALTH_CHECK_TIMEOUT_MS;
/** Longer than every budget and bound: an answer before it ends was not the database's. */
const STALL_MS = 40_000;
const KEYS = 30;

type Timed = {
  readonly what: string;
  readonly bound: number;
  readonly answer: HttpAnswer | 'no answer';
  readonly ms: number;
};

describe('stalls: the database stops answering (a proxy that stops forwarding) for longer than every budget', () => {
  let cluster: Cluster & { dispose(): Promise<void> };
  let proxy: SlowProxy;
  let dataDir: string;
  let service: ServiceProcess | undefined;
  beforeAll(async () => {
    cluster = await createCluster('stalls');
    await cluster.query('CREATE DATABASE orders');
    proxy = await startSlowProxy({ host: '127.0.0.1', port: cluster.port });
    dataDir = await mkdtemp(join(tmpdir(), 'orders-stalls-'));
  });
  afterAll(async () => {
    proxy?.resume();
    await service?.kill('SIGKILL');
    await proxy?.close();
    await cluster?.dispose();
    await rm(dataDir, { recursive: true, force: true });
  });

  it('answers every request within its bound while stalled, then settles with one order per key', async () => {
    service = await startProcess({
      DATABASE_URL: `postgres://postgres@127.0.0.1:${proxy.port}/orders`,
      DATA_DIR: dataDir,
    });
    const url = service.url;
    const keyOf = cartKeys('stall', KEYS);
    const [[doneKey = '', doneCart = ''] = [], ...rest] = [...keyOf];
    await putCarts(url, [...keyOf.values()]);
    const done = await placeOrder(url, doneCart, doneKey);
    expect(done.status).toBe(201);

    proxy.stall();
    const stalledAt = Date.now();
    const timed = async (what: string, bound: number, send: () => Promise<HttpAnswer>): Promise<Timed> => {
      const started = Date.now();
      const answer = await Promise.race([
        send(),
        new Promise<'no answer'>((resolve) =>
          setTimeout(() => resolve('no answer'), STALL_MS - (started - stalledAt) - 1_000),
        ),
      ]);
      return { what, bound, answer, ms: Date.now() - started };
    };
    const during = await Promise.all([
      timed('a new key', KEYED_BOUND_MS, () => placeOrder(url, rest[0]?.[1] ?? '', rest[0]?.[0] ?? '')),
      timed('a replay of a finished key', KEYED_BOUND_MS, () => placeOrder(url, doneCart, doneKey)),
      timed('a different body with a finished key', KEYED_BOUND_MS, () =>
        call(url, 'POST', '/v1/orders', {
          token: 'demo-a',
          key: doneKey,
          json: { cart_id: doneCart, cart_version: 1, delivery_option: 'standard' },
        }),
      ),
      timed('GET /healthz', HEALTH_BOUND_MS, () => call(url, 'GET', '/healthz')),
      ...rest
        .slice(1, 10)
        .map(([key, cart]) => timed(`a new key (${cart})`, KEYED_BOUND_MS, () => placeOrder(url, cart, key))),
    ]);
    proxy.resume();

    const late = during
      .filter(({ answer, ms, bound }) => answer === 'no answer' || ms > bound)
      .map(({ what, ms, bound }) => `${what}: ${ms} ms, bound ${bound} ms`);
    expect(late).toEqual([]);
    for (const { what, answer } of during) {
      if (answer === 'no answer') continue;
      expect(answer.status, what).toBe(503);
      expect(answer.headers['retry-after'], what).toBeDefined();
    }

    const histories = await storm({
      services: () => [url],
      keys: [...keyOf.keys()],
      clientsPerKey: 1,
      send: (to, key) => placeOrder(to, keyOf.get(key) ?? '', key),
    }).done;
    await expectOrdersSettled(
      service,
      keyOf,
      histories,
      async (sql) => (await cluster.query<{ n: number }>(sql, [], 'orders'))[0]?.n,
    );
  });
});
