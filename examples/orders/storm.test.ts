import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { createTestDatabase } from '../../test/support/database.js';
import { call, type HttpAnswer, json } from './testing/http.js';
import { type ServiceProcess, startProcess } from './testing/child.js';

const KEYS = 8;
const COPIES = 20;

interface Storage {
  readonly env: Record<string, string>;
  /** Counts rows of the service's database after the run. */
  count(sql: string): Promise<number>;
  dispose(): Promise<void>;
}

const storages: Record<string, () => Promise<Storage>> = {
  async pglite() {
    const dataDir = await mkdtemp(join(tmpdir(), 'orders-storm-'));
    return {
      env: { DATA_DIR: dataDir },
      async count(sql) {
        // The service is stopped by then: open its files directly.
        const { PGlite } = await import('@electric-sql/pglite');
        const lite = await PGlite.create({ dataDir: join(dataDir, 'pglite') });
        try {
          return (await lite.query<{ n: number }>(sql)).rows[0]?.n ?? -1;
        } finally {
          await lite.close();
        }
      },
      dispose: () => rm(dataDir, { recursive: true, force: true }),
    };
  },
  async postgres() {
    const db = await createTestDatabase();
    const dataDir = await mkdtemp(join(tmpdir(), 'orders-storm-'));
    return {
      env: { DATABASE_URL: db.url, DATA_DIR: dataDir },
      async count(sql) {
        const client = new pg.Client({ connectionString: db.url });
        await client.connect();
        try {
          return (await client.query<{ n: number }>(sql)).rows[0]?.n ?? -1;
        } finally {
          await client.end();
        }
      },
      async dispose() {
        await db.drop();
        await rm(dataDir, { recursive: true, force: true });
      },
    };
  },
};

describe.each(Object.keys(storages))('a storm of duplicates, the service killed mid-storm and restarted, on %s', (name) => {
  it('leaves one order per key, and every 201 seen before and after the kill is the same order', async () => {
    const storage = await (storages[name] as () => Promise<Storage>)();
    let service: ServiceProcess | undefined;
    try {
      service = await startProcess(storage.env);
      const carts = Array.from({ length: KEYS }, (_, index) => ({ cart: `storm-${index}`, key: randomUUID() }));
      for (const { cart } of carts) {
        const put = await call(service.url, 'PUT', `/v1/carts/${cart}`, { token: 'demo-a', json: { items: [{ sku: 'GADGET-2', qty: 1 }] } });
        expect(put.status).toBe(200);
      }
      const order = (url: string, cart: string, key: string) =>
        call(url, 'POST', '/v1/orders', { token: 'demo-a', key, json: { cart_id: cart, cart_version: 1, delivery_option: 'express' } });

      const storm = carts.flatMap(({ cart, key }) => Array.from({ length: COPIES }, () => order(service!.url, cart, key)));
      // Killed as soon as the first answer is out, with the rest of the storm in flight.
      await Promise.any(storm);
      await service.kill('SIGKILL');
      const before = (await Promise.allSettled(storm)).flatMap((settled) => (settled.status === 'fulfilled' ? [settled.value] : []));
      expect(before.length).toBeLessThan(KEYS * COPIES);

      service = await startProcess(storage.env);
      for (const { cart, key } of carts) {
        const final = await settle(() => order(service!.url, cart, key));
        expect(final.status).toBe(201);
        const id = json(final).id;
        for (const answer of before.filter((a) => a.status === 201 && json(a).cart_id === cart)) expect(json(answer).id).toBe(id);
        const again = await order(service.url, cart, key);
        expect(again.headers['idempotent-replayed']).toBe('true');
        expect(again.body.equals(final.body)).toBe(true);
      }
      await service.kill('SIGTERM');
      service = undefined;
      expect(await storage.count("SELECT count(*)::int AS n FROM orders WHERE cart_id LIKE 'storm-%'")).toBe(KEYS);
      expect(await storage.count("SELECT count(*)::int AS n FROM retrysafe_operations WHERE operation = 'orders.create@1' AND state = 'completed'")).toBe(KEYS);
      expect(await storage.count("SELECT count(*)::int AS n FROM retrysafe_operations WHERE state = 'in_progress'")).toBe(0);
    } finally {
      await service?.kill('SIGKILL');
      await storage.dispose();
    }
  }, 240_000);
});

/** Retries like a client that keeps its key: until the answer is neither a network error nor "still in progress". */
async function settle(send: () => Promise<HttpAnswer>): Promise<HttpAnswer> {
  for (let attempt = 0; attempt < 60; attempt += 1) {
    const answer = await send().catch(() => undefined);
    if (answer !== undefined && answer.status !== 409 && answer.status !== 503) return answer;
    await sleep(500);
  }
  throw new Error('the key never settled');
}
