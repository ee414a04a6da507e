import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { call, type HttpAnswer, json } from '../testing/http.js';
import { type ServiceProcess, startProcess } from '../testing/child.js';
import { storages } from '../testing/storage.js';

const KEYS = 8;
const COPIES = 20;

describe.each(storages)('a storm of duplicates, the service killed mid-storm and restarted, on $name', (factory) => {
  it('leaves one order per key, and every 201 seen before and after the kill is the same order', async () => {
    const storage = await factory.create();
    let service: ServiceProcess | undefined;
    try {
      service = await startProcess(storage.env);
      const carts = Array.from({ length: KEYS }, (_, index) => ({ cart: `storm-${index}`, key: randomUUID() }));
      for (const { cart } of carts) {
        const put = await call(service.url, 'PUT', `/v1/carts/${cart}`, {
          token: 'demo-a',
          json: { items: [{ sku: 'GADGET-2', qty: 1 }] },
        });
        expect(put.status).toBe(200);
      }
      const order = (url: string, cart: string, key: string) =>
        call(url, 'POST', '/v1/orders', {
          token: 'demo-a',
          key,
          json: { cart_id: cart, cart_version: 1, delivery_option: 'express' },
        });

      const storm = carts.flatMap(({ cart, key }) =>
        Array.from({ length: COPIES }, () => order(service!.url, cart, key)),
      );
      // Killed as soon as the first answer is out, with the rest of the storm in flight.
      await Promise.any(storm);
      await service.kill('SIGKILL');
      const before = (await Promise.allSettled(storm)).flatMap((settled) =>
        settled.status === 'fulfilled' ? [settled.value] : [],
      );
      expect(before.length).toBeLessThan(KEYS * COPIES);

      service = await startProcess(storage.env);
      for (const { cart, key } of carts) {
        const final = await settle(() => order(service!.url, cart, key));
        expect(final.status).toBe(201);
        const id = json(final).id;
        for (const answer of before.filter((a) => a.status === 201 && json(a).cart_id === cart))
          expect(json(answer).id).toBe(id);
        const again = await order(service.url, cart, key);
        expect(again.headers['idempotent-replayed']).toBe('true');
        expect(again.body.equals(final.body)).toBe(true);
      }
      await service.kill('SIGTERM');
      service = undefined;
      expect(await storage.count("SELECT count(*)::int AS n FROM orders WHERE cart_id LIKE 'storm-%'")).toBe(KEYS);
      expect(
        await storage.count(
          "SELECT count(*)::int AS n FROM retrysafe_operations WHERE operation = 'orders.create@1' AND state = 'completed'",
        ),
      ).toBe(KEYS);
      expect(
        await storage.count("SELECT count(*)::int AS n FROM retrysafe_operations WHERE state = 'in_progress'"),
      ).toBe(0);
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
