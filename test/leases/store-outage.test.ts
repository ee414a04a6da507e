import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { providerAdmin } from '../../examples/provider/client.js';
import { type Provider, startProvider } from '../../examples/provider/provider.js';
import { leased } from '../../src/adapters/fetch/index.js';
import { idempotency } from '../../src/modes/idempotency.js';
import { fromPg, migrate, portable, postgresStore } from '../../src/postgres/index.js';
import { createMigratedDatabase, type TestDatabase } from '../support/database.js';
import { freePort } from '../support/free-port.js';
import { type SlowProxy, startSlowProxy } from '../support/slow-proxy.js';
import { downstreamKey } from '../../src/modes/downstream-key.js';
import { OPERATION } from './harness.js';
import { noCalls, PAYMENTS_TABLE, paymentRoute } from './payment-route.js';
import { waitFor } from '../support/wait-for.js';

/** On node-postgres only: PGlite is in-process, so there is no connection to refuse or to cut. */
describe('leased mode when the store fails (postgres, node-postgres)', () => {
  let db: TestDatabase;
  let direct: pg.Pool;
  let provider: Provider;
  let admin: ReturnType<typeof providerAdmin>;
  beforeAll(async () => {
    db = await createMigratedDatabase();
    direct = new pg.Pool({ connectionString: db.url, max: 4 });
    direct.on('error', () => {});
    await migrate(portable(fromPg(direct)));
    await direct.query(PAYMENTS_TABLE);
    provider = await startProvider();
    admin = providerAdmin(provider.url);
  });
  afterAll(async () => {
    await provider.close();
    await direct.end();
    await db.drop();
  });

  const request = (key: string, body: unknown): Request =>
    new Request('http://service.test/payments', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'idempotency-key': key, 'x-tenant': 'tenant-a' },
      body: JSON.stringify(body),
    });

  it('answers 503 store-unavailable with Retry-After when the store cannot be reached, and the handler never runs', async () => {
    const pool = new pg.Pool({
      connectionString: `postgres://postgres@127.0.0.1:${await freePort()}/none`,
      connectionTimeoutMillis: 500,
    });
    pool.on('error', () => {});
    const calls = noCalls();
    const pay = leased(
      idempotency({ store: postgresStore(portable(fromPg(pool))), retryAfterSeconds: 3 }),
      paymentRoute(provider.url, calls),
    );
    try {
      const before = (await admin.stats()).requests;
      const answer = await pay(request(randomUUID(), { order: 'ord-unreachable', amount: 100 }), undefined);
      expect(answer.status).toBe(503);
      expect(((await answer.json()) as { type: string }).type).toMatch(/store-unavailable$/);
      expect(answer.headers.get('retry-after')).toBe('3');
      expect(calls).toEqual(noCalls());
      expect((await admin.stats()).requests).toBe(before);
    } finally {
      await pool.end();
    }
  });

  it('does not call a step again without reconciling it when the store failed after the call', async () => {
    const url = new URL(db.url);
    const proxy: SlowProxy = await startSlowProxy({ host: url.hostname, port: Number(url.port) });
    url.port = String(proxy.port);
    const proxied = new pg.Pool({ connectionString: url.toString(), max: 4 });
    proxied.on('error', () => {});
    const calls = noCalls();
    const key = randomUUID();
    const body = { order: `ord-${key}`, amount: 2200 };
    try {
      const pay = leased(
        idempotency({ store: postgresStore(portable(fromPg(proxied))), storeTimeoutMs: 500 }),
        paymentRoute(provider.url, calls),
      );
      await admin.control({ mode: 'hold', reference: body.order });
      const answer = pay(request(key, body), undefined);
      // The charge is inside the provider: the store goes silent before its checkpoint can be written.
      await waitFor(async () => (await admin.stats()).held === 1, { what: 'the charge to be held' });
      proxy.stall();
      await admin.control({ mode: 'release' });
      const failed = await answer;
      expect(failed.status).toBe(503);
      expect(calls.charge).toBe(1);
    } finally {
      // Closing drops what waited in the proxy: the checkpoint never reaches the database.
      await proxy.close();
      await proxied.end().catch(() => undefined);
    }
    const steps = await direct.query<{ step: string; finished: boolean }>(
      'SELECT step, finished_at IS NOT NULL AS finished FROM retrysafe_steps WHERE key = $1',
      [key],
    );
    expect(steps.rows).toEqual([{ step: 'charge', finished: false }]);

    // The next attempt, by a process that reaches the store, once the lease ran out.
    await direct.query(
      "UPDATE retrysafe_operations SET lease_expires_at = now() - interval '1 second' WHERE key = $1",
      [key],
    );
    const resumed = await leased(
      idempotency({ store: postgresStore(portable(fromPg(direct))) }),
      paymentRoute(provider.url, calls),
    )(request(key, body), undefined);
    expect(resumed.status).toBe(201);
    expect(calls).toMatchObject({ charge: 1, reconcile: 1, record: 1 });
    expect(await admin.count(downstreamKey({ tenant: 'tenant-a', operation: OPERATION, key }, 'charge'))).toBe(1);
  });
});
