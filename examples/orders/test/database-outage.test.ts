import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { createTestDatabase } from '../../../test/support/database.js';
import { freePort } from '../../../test/support/free-port.js';
import { startProcess } from '../testing/child.js';
import { startCuttingProxy } from '../testing/cutting-proxy.js';
import { call, json } from '../testing/http.js';
import { A } from '../testing/service.js';
import { waitFor } from '../../../test/support/wait-for.js';

const PROBLEMS = 'https://retrysafe.dev/examples/orders/problems/';

describe('the service as a process, on PostgreSQL that is unreachable, then back, then loses its backends', () => {
  it(
    'starts anyway, answers 503 naming the failed check, serves once the database answers, and survives terminated backends',
    { timeout: 180_000 },
    async () => {
      const db = await createTestDatabase();
      const dataDir = await mkdtemp(join(tmpdir(), 'orders-data-'));
      // The service is told a port where nothing listens yet; the proxy opens there later.
      const target = new URL(db.url);
      const gate = await freePort();
      const through = new URL(db.url);
      through.port = String(gate);
      const service = await startProcess({ DATABASE_URL: through.toString(), DATA_DIR: dataDir }, 90_000, {
        until: 'listening',
      });
      const proxy = { current: undefined as Awaited<ReturnType<typeof startCuttingProxy>> | undefined };
      const admin = new pg.Client({ connectionString: db.url });
      try {
        const health = await call(service.url, 'GET', '/healthz');
        expect(health.status).toBe(503);
        expect(health.headers['content-type']).toBe('application/problem+json');
        expect(health.headers['retry-after']).toBe('1');
        expect(json(health)).toMatchObject({
          type: `${PROBLEMS}database-unavailable`,
          checks: { database: 'failed', schema: 'pending' },
        });
        const early = await call(service.url, 'PUT', '/v1/carts/c-outage', {
          token: A.token,
          json: { items: [{ sku: 'WIDGET-1', qty: 1 }] },
        });
        expect(early.status).toBe(503);
        expect(json(early).type).toBe(`${PROBLEMS}database-unavailable`);

        proxy.current = await startCuttingProxy({ host: target.hostname, port: Number(target.port) }, gate);
        await waitFor(async () => (await call(service.url, 'GET', '/healthz')).status === 200);
        expect(json(await call(service.url, 'GET', '/healthz'))).toEqual({
          status: 'ok',
          checks: { database: 'ok', schema: 'ok' },
        });
        const cart = await call(service.url, 'PUT', '/v1/carts/c-outage', {
          token: A.token,
          json: { items: [{ sku: 'WIDGET-1', qty: 1 }] },
        });
        expect(cart.status).toBe(200);
        const order = { cart_id: 'c-outage', cart_version: json(cart).cart_version, delivery_option: 'standard' };
        expect(
          (await call(service.url, 'POST', '/v1/orders', { token: A.token, key: 'k-outage-1', json: order })).status,
        ).toBe(201);

        // Every backend of the service goes away at once, idle and busy alike.
        await admin.connect();
        await admin.query(
          'SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()',
          [target.pathname.slice(1)],
        );
        await waitFor(async () => (await call(service.url, 'GET', '/v1/orders', { token: A.token })).status === 200);
        const replay = await call(service.url, 'POST', '/v1/orders', {
          token: A.token,
          key: 'k-outage-1',
          json: order,
        });
        expect(replay.status).toBe(201);
        expect(replay.headers['idempotent-replayed']).toBe('true');
        expect(
          (await admin.query<{ n: number }>("SELECT count(*)::int AS n FROM orders WHERE cart_id = 'c-outage'")).rows[0]
            ?.n,
        ).toBe(1);
        expect(await service.kill('SIGTERM')).toBe(0);
      } finally {
        await service.kill('SIGKILL');
        await proxy.current?.close();
        await admin.end();
        await db.drop();
        await rm(dataDir, { recursive: true, force: true });
      }
    },
  );
});
