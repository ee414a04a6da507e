import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { atomic, type FetchRequest } from '../../src/adapters/fetch/index.js';
import type { AtomicRoute } from '../../src/core/route.js';
import { idempotency } from '../../src/modes/idempotency.js';
import { maintenanceStore } from '../../src/postgres/postgres-maintenance-store.js';
import { postgresStore } from '../../src/postgres/index.js';
import { Sweeper } from '../../src/retention/sweeper.js';
import type { SqlClient } from '../../src/store/sql-client.js';
import { type Engine, engines } from '../support/engines.js';
import { readChoices } from '../adapters/harness.js';
import { waitFor } from '../support/wait-for.js';

describe.each(engines)('a retry after retention on $name', (factory) => {
  let engine: Engine;
  beforeAll(async () => {
    engine = await factory.open();
    await engine.database.query('CREATE TABLE orders (id serial PRIMARY KEY, tenant text NOT NULL, sku text NOT NULL)');
  });
  afterAll(() => engine.close());

  // A tombstone is found by the read before the transaction, or by the claim inside it.
  it.each(readChoices)(
    'is refused with response-expired and the resource once the response is swept, and is a new operation once the tombstone is (reading before the claim: $readBeforeClaim)',
    async ({ readBeforeClaim }) => {
      // Each case sweeps the whole table: start from an empty one.
      await engine.database.query('DELETE FROM retrysafe_operations');
      await engine.database.query('DELETE FROM orders');
      // A short response retention, so the test only waits for the database clock to pass it; the tombstone's is moved below.
      const config = idempotency({
        store: postgresStore(engine.database),
        retention: { responseSeconds: 0.2, tombstoneSeconds: 3600 },
        readBeforeClaim,
      });
      let invocations = 0;
      const route: AtomicRoute<FetchRequest, { sku: string }, SqlClient> = {
        operation: 'orders.create@1',
        tenant: ({ request }) => request.headers.get('x-tenant') ?? undefined,
        async handler({ tx, tenant, input }) {
          invocations += 1;
          const { rows } = await tx.query<{ id: number }>(
            'INSERT INTO orders (tenant, sku) VALUES ($1, $2) RETURNING id',
            [tenant, input.sku],
          );
          return { status: 201, headers: { location: `/orders/${rows[0]?.id}` }, body: { id: rows[0]?.id } };
        },
      };
      const createOrder = atomic(config, route);
      const key = randomUUID();
      const send = () =>
        createOrder(
          new Request('http://shop.test/orders', {
            method: 'POST',
            headers: { 'content-type': 'application/json', 'idempotency-key': key, 'x-tenant': 'tenant-a' },
            body: JSON.stringify({ sku: 'W-1' }),
          }),
          undefined,
        );
      const record = async () =>
        (
          await engine.database.query<{ state: string; due: boolean; gone: boolean }>(
            'SELECT state, response_expires_at <= now() AS due, expires_at <= now() AS gone FROM retrysafe_operations WHERE key = $1',
            [key],
          )
        ).rows[0];
      const orders = async () =>
        (await engine.database.query<{ n: number }>('SELECT count(*)::int AS n FROM orders')).rows[0]?.n;
      const sweeper = new Sweeper({ store: maintenanceStore(engine.database) });

      const first = await send();
      expect(first.status).toBe(201);
      const location = first.headers.get('location');
      expect(location).toMatch(/^\/orders\/\d+$/);

      await waitFor(async () => (await record())?.due === true);
      // Reads never decide expiry: until the sweeper runs, the response is still replayed.
      const beforeSweep = await send();
      expect(beforeSweep.headers.get('idempotent-replayed')).toBe('true');
      expect((await sweeper.runOnce()).tombstoned).toBe(1);
      expect((await record())?.state).toBe('tombstone');

      const late = await send();
      expect(late.status).toBe(410);
      expect(late.headers.get('content-type')).toBe('application/problem+json');
      expect(late.headers.get('location')).toBe(location);
      expect(await late.json()).toMatchObject({
        type: 'https://retrysafe.dev/problems/response-expired',
        status: 410,
        resource: location,
      });
      expect(invocations).toBe(1);
      expect(await orders()).toBe(1);

      await engine.database.query(
        "UPDATE retrysafe_operations SET expires_at = now() - interval '1 second' WHERE key = $1",
        [key],
      );
      expect((await record())?.gone).toBe(true);
      expect((await sweeper.runOnce()).deleted).toBe(1);
      expect(await record()).toBeUndefined();

      // The documented limit: past the tombstone, the key is unknown again and runs as a new operation.
      const muchLater = await send();
      expect(muchLater.status).toBe(201);
      expect(muchLater.headers.get('idempotent-replayed')).toBeNull();
      expect(invocations).toBe(2);
      expect(await orders()).toBe(2);
    },
  );
});
