import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { type ServiceProcess, runProcess, startProcess } from '../testing/child.js';
import { call, json } from '../testing/http.js';
import { A } from '../testing/service.js';
import { storages } from '../testing/storage.js';

describe.each(storages)('the service as a process, on $name', (storage) => {
  const running: ServiceProcess[] = [];
  afterEach(async () => {
    await Promise.all(running.splice(0).map((service) => service.kill('SIGKILL')));
  });
  const start = async (env: Readonly<Record<string, string>>) => {
    const service = await startProcess(env);
    running.push(service);
    return service;
  };

  it(
    'keeps an order through SIGKILL: after a restart the retry replays it and there is one order',
    { timeout: 240_000 },
    async () => {
      const store = await storage.create();
      try {
        const first = await start(store.env);
        expect(first.output()).toContain(`orders service listening on ${first.url}`);
        expect(first.output()).toContain('demo-a (tenant-a)');
        const cart = await call(first.url, 'PUT', '/v1/carts/c-crash', {
          token: A.token,
          json: { items: [{ sku: 'GADGET-2', qty: 1 }] },
        });
        expect(cart.status).toBe(200);
        const body = { cart_id: 'c-crash', cart_version: json(cart).cart_version, delivery_option: 'express' };
        const created = await call(first.url, 'POST', '/v1/orders', { token: A.token, key: 'k-crash', json: body });
        expect(created.status).toBe(201);
        expect(await first.kill('SIGKILL')).toBe('SIGKILL');

        const second = await start(store.env);
        const retry = await call(second.url, 'POST', '/v1/orders', { token: A.token, key: 'k-crash', json: body });
        expect(retry.status).toBe(201);
        expect(retry.headers['idempotent-replayed']).toBe('true');
        expect(retry.body.equals(created.body)).toBe(true);
        expect(retry.headers.location).toBe(created.headers.location);
        const otherKey = await call(second.url, 'POST', '/v1/orders', { token: A.token, key: 'k-crash-2', json: body });
        expect(otherKey.status).toBe(409);
        expect(otherKey.headers.location).toBe(created.headers.location);

        // A clean stop ends the process by itself, and leaves the data readable by another client.
        expect(await second.kill('SIGTERM')).toBe(0);
        expect(second.output()).toContain('SIGTERM, stopping');
        expect(await store.count("SELECT count(*)::int AS n FROM orders WHERE cart_id = 'c-crash'")).toBe(1);
        expect(
          await store.count(
            "SELECT count(*)::int AS n FROM retrysafe_operations WHERE key = 'k-crash' AND state = 'completed'",
          ),
        ).toBe(1);
        expect(await store.count("SELECT count(*)::int AS n FROM retrysafe_operations WHERE key = 'k-crash-2'")).toBe(
          0,
        );
      } finally {
        await Promise.all(running.splice(0).map((service) => service.kill('SIGKILL')));
        await store.dispose();
      }
    },
  );
});

describe('the service as a process, misconfigured', () => {
  it('explains bad settings and exits with 1', { timeout: 60_000 }, async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'orders-data-'));
    try {
      const { code, output } = await runProcess({ PORT: 'eighty', RETRYSAFE_TOKENS: 'nope', DATA_DIR: dataDir });
      expect(code).toBe(1);
      expect(output).toContain('PORT must be an integer');
      expect(output).toContain('RETRYSAFE_TOKENS entry 1');
      expect(await readdir(dataDir)).toEqual([]);
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});
