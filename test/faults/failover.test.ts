import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ServiceProcess, startProcess } from '../../examples/orders/testing/child.js';
import { createReplicatedPair, type ReplicatedPair } from './support/cluster.js';
import { afterFinals, placeOrder, putCarts, storm, successesByKey, unexpectedAnswers } from './support/storm.js';

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
    const carts = Array.from({ length: KEYS }, (_, index) => `failover-${index}`);
    await putCarts(url, carts);
    const keyOf = new Map<string, string>(carts.map((cart) => [randomUUID(), cart]));

    const running = storm({ services: () => [url], keys: [...keyOf.keys()], clientsPerKey: 2, spreadMs: 4_000, settleWithinMs: 60_000, send: (to, key) => placeOrder(to, keyOf.get(key) ?? '', key) });
    // Some orders are placed before the kill, the rest are in flight or not sent yet.
    await afterFinals(running, KEYS / 4);
    await primary.kill();
    await sleep(1_000);
    await standby.promote();
    const histories = await running.done;

    expect(unexpectedAnswers(histories), service.output().slice(-3000)).toEqual([]);
    expect(await Promise.race([service.exited, sleep(0, 'running')]), service.output().slice(-3000)).toBe('running');
    const switched = histories.flatMap(({ attempts }) => attempts).filter((attempt) => attempt.kind === 'answer' && attempt.answer.status === 503);
    expect(switched.length).toBeGreaterThan(0);

    const seen = successesByKey(histories);
    for (const [key, cart] of keyOf) {
      const bodies = seen.get(key) ?? [];
      expect(bodies.length, `key of ${cart}`).toBeGreaterThan(0);
      const replay = await placeOrder(url, cart, key);
      expect(replay.status).toBe(201);
      expect(replay.headers['idempotent-replayed']).toBe('true');
      for (const body of bodies) expect(body.equals(replay.body)).toBe(true);
    }
    const count = async (sql: string) => (await standby.query<{ n: number }>(sql, [], 'orders'))[0]?.n;
    expect(await count("SELECT count(*)::int AS n FROM orders WHERE cart_id LIKE 'failover-%'")).toBe(KEYS);
    expect(await count("SELECT count(*)::int AS n FROM (SELECT cart_id FROM orders GROUP BY cart_id HAVING count(*) > 1) AS twice")).toBe(0);
    expect(await count("SELECT count(*)::int AS n FROM retrysafe_operations WHERE operation = 'orders.create@1' AND state = 'completed'")).toBe(KEYS);
    expect(await count("SELECT count(*)::int AS n FROM retrysafe_operations WHERE state = 'in_progress'")).toBe(0);
    expect(await count('SELECT pg_is_in_recovery()::int AS n')).toBe(0);
  });
});
