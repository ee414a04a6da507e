import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ServiceProcess, startProcess } from '../../examples/orders/testing/child.js';
import { createReplicatedPair, type ReplicatedPair } from './support/cluster.js';
import { cartKeys, expectOrdersSettled } from './support/order-checks.js';
import { afterFinals, placeOrder, putCarts, storm } from './support/storm.js';

const KEYS = 120;

describe('failover: the primary killed with SIGKILL mid-storm, the synchronous standby promoted', () => {
  let pair: ReplicatedPair;
  let dataDir: string;
  let service: ServiceProcess | undefined;
  beforeAll(async () => {
    pair = await createReplicatedPair();
    await pair.primary.query('CREATE DATABASE orders');
    dataDir = await mkdtemp(join(tmpdir(), 'orders-failover-'));
  });
  afterAll(async () => {
    await service?.kill('SIGKILL');
    await pair?.dispose();
    await rm(dataDir, { recursive: true, force: true });
  });

  it('keeps every answer a client saw, one order per key, and answers the switch with 503 and Retry-After', async () => {
    const { primary, standby } = pair;
    service = await startProcess({
      DATABASE_URL: `postgres://postgres@127.0.0.1:${primary.port},127.0.0.1:${standby.port}/orders?target_session_attrs=read-write`,
      DATA_DIR: dataDir,
    });
    const url = service.url;
    const keyOf = cartKeys('failover', KEYS);
    await putCarts(url, [...keyOf.values()]);

    const running = storm({
      services: () => [url],
      keys: [...keyOf.keys()],
      clientsPerKey: 2,
      spreadMs: 4_000,
      settleWithinMs: 60_000,
      send: (to, key) => placeOrder(to, keyOf.get(key) ?? '', key),
    });
    // Some orders are placed before the kill, the rest are in flight or not sent yet.
    await afterFinals(running, KEYS / 4);
    await primary.kill();
    await sleep(1_000);
    await standby.promote();
    const histories = await running.done;

    const switched = histories
      .flatMap(({ attempts }) => attempts)
      .filter((attempt) => attempt.kind === 'answer' && attempt.answer.status === 503);
    expect(switched.length).toBeGreaterThan(0);
    await expectOrdersSettled(
      service,
      keyOf,
      histories,
      async (sql) => (await standby.query<{ n: number }>(sql, [], 'orders'))[0]?.n,
    );
    expect((await standby.query<{ standby: boolean }>('SELECT pg_is_in_recovery() AS standby'))[0]?.standby).toBe(
      false,
    );
  });
});
