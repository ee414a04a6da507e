import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { atomic, type FetchRequest } from '../../src/adapters/fetch/index.js';
import { idempotency } from '../../src/modes/idempotency.js';
import type { AtomicRoute } from '../../src/core/route.js';
import { maintenanceStore } from '../../src/postgres/postgres-maintenance-store.js';
import { postgresStore } from '../../src/postgres/index.js';
import { Sweeper } from '../../src/retention/sweeper.js';
import type { SqlClient } from '../../src/store/sql-client.js';
import { type Engine, engines } from '../support/engines.js';

/** 80,000 responses that expired a day ago, and 20,000 tombstones that expired an hour ago. */
const EXPIRED_RECORDS = `
INSERT INTO retrysafe_operations (tenant, operation, key, fingerprint, state, response_status, response_headers,
  response_body, resource_ref, finished_at, response_expires_at, expires_at)
SELECT 'tenant-' || (i % 50), 'orders.create@1', 'old-' || i, sha256(convert_to('old-' || i, 'UTF8')),
  CASE WHEN i % 5 = 0 THEN 'tombstone' ELSE 'completed' END,
  201,
  CASE WHEN i % 5 = 0 THEN NULL ELSE '{"content-type":"application/json"}'::jsonb END,
  CASE WHEN i % 5 = 0 THEN NULL ELSE convert_to('{"id":' || i || '}', 'UTF8') END,
  '/orders/' || i,
  now() - interval '2 days',
  now() - interval '1 day',
  CASE WHEN i % 5 = 0 THEN now() - interval '1 hour' ELSE now() + interval '29 days' END
FROM generate_series(1, 100000) AS i`;

// node-postgres only: PGlite runs one transaction at a time on its one
// connection, so it cannot show requests being answered beside a sweep.
const nodePostgres = engines.filter((factory) => factory.name.includes('node-postgres'));

describe.each(nodePostgres)('sweeping 100,000 expired records on $name', (factory) => {
  let engine: Engine;
  beforeAll(async () => {
    engine = await factory.open();
    await engine.database.query('CREATE TABLE orders (id serial PRIMARY KEY, tenant text NOT NULL, sku text NOT NULL)');
    await engine.database.query(EXPIRED_RECORDS);
  });
  afterAll(() => engine.close());

  it(
    'turns every expired response into a tombstone and deletes every expired tombstone while requests keep being answered',
    { timeout: 180_000 },
    async () => {
      const config = idempotency({ store: postgresStore(engine.database) });
      const route: AtomicRoute<FetchRequest, { sku: string }, SqlClient> = {
        operation: 'orders.create@1',
        tenant: () => 'tenant-live',
        async handler({ tx, tenant, input }) {
          const { rows } = await tx.query<{ id: number }>(
            'INSERT INTO orders (tenant, sku) VALUES ($1, $2) RETURNING id',
            [tenant, input.sku],
          );
          return { status: 201, headers: { location: `/orders/${rows[0]?.id}` }, body: { id: rows[0]?.id } };
        },
      };
      const createOrder = atomic(config, route);
      const order = () =>
        createOrder(
          new Request('http://shop.test/orders', {
            method: 'POST',
            headers: { 'content-type': 'application/json', 'idempotency-key': randomUUID() },
            body: JSON.stringify({ sku: 'W-1' }),
          }),
          undefined,
        );

      let phase: 'before' | 'sweeping' | 'after' = 'before';
      let answeredDuringSweep = 0;
      const failures: number[] = [];
      const stream = async (): Promise<void> => {
        while (phase !== 'after') {
          const answer = await order();
          if (answer.status !== 201) failures.push(answer.status);
          else if (phase === 'sweeping') answeredDuringSweep += 1;
        }
      };
      const streams = [stream(), stream(), stream(), stream()];

      phase = 'sweeping';
      const report = await new Sweeper({ store: maintenanceStore(engine.database), batchSize: 500 }).runOnce();
      phase = 'after';
      await Promise.all(streams);

      expect(report).toMatchObject({ tombstoned: 80_000, deleted: 20_000 });
      expect(report.batches).toBeGreaterThanOrEqual(200);
      expect(answeredDuringSweep).toBeGreaterThan(0);
      expect(failures).toEqual([]);

      const { rows } = await engine.database.query<{
        expired_responses: number;
        expired_tombstones: number;
        tombstones: number;
        tombstones_with_response: number;
        live: number;
        orders: number;
      }>(`
      SELECT
        count(*) FILTER (WHERE state IN ('completed', 'failed') AND response_expires_at <= now())::int AS expired_responses,
        count(*) FILTER (WHERE state = 'tombstone' AND expires_at <= now())::int AS expired_tombstones,
        count(*) FILTER (WHERE state = 'tombstone')::int AS tombstones,
        count(*) FILTER (WHERE state = 'tombstone' AND (response_body IS NOT NULL OR response_headers IS NOT NULL))::int AS tombstones_with_response,
        count(*) FILTER (WHERE tenant = 'tenant-live' AND state = 'completed')::int AS live,
        (SELECT count(*)::int FROM orders) AS orders
      FROM retrysafe_operations`);
      expect(rows[0]).toMatchObject({
        expired_responses: 0,
        expired_tombstones: 0,
        tombstones: 80_000,
        tombstones_with_response: 0,
      });
      // Every answered request kept its fresh record.
      expect(rows[0]?.live).toBe(rows[0]?.orders);
    },
  );
});
