import pg from 'pg';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { RetrysafeEvent } from '../../src/core/events.js';
import { idempotency } from '../../src/modes/idempotency.js';
import { RecoveryWorker } from '../../src/leases/recovery-worker.js';
import { fromPg, migrate, portable, postgresStore } from '../../src/postgres/index.js';
import type { SqlClient, SqlDatabase } from '../../src/store/sql-client.js';
import { expectProblem, newKey } from '../adapters/harness.js';
import { ORDERS_TABLE } from '../support/apps.js';
import { createMigratedDatabase, type TestDatabase } from '../support/database.js';
import { startSlowProxy } from '../support/slow-proxy.js';
import { postOrder, SHOP_OPTIONS, snapshot } from './harness.js';
import { gate } from '../support/gate.js';
import { frameworks, type ShopState } from './shop.js';
import { waitFor } from '../support/wait-for.js';

/** The finishing statement of a lease, waiting for a lock in this test's database. */
const BLOCKED_FINISH = `SELECT count(*)::int AS n FROM pg_stat_activity
  WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE '%UPDATE retrysafe_operations%SET state = $6%'`;

/**
 * On node-postgres only: PGlite is in-process, so there is no connection to
 * lose. The store goes through a TCP proxy that is closed while the route
 * runs; the route's own writes go straight to the database.
 */
describe.each(frameworks)(
  'a transparent route whose store is slow or unreachable when it finishes, through $name',
  (framework) => {
    let db: TestDatabase;
    let direct: pg.Pool;
    let database: SqlDatabase<SqlClient>;
    beforeAll(async () => {
      db = await createMigratedDatabase();
      direct = new pg.Pool({ connectionString: db.url, max: 4 });
      database = portable(fromPg(direct));
      await migrate(database);
      await database.query(ORDERS_TABLE);
    });
    beforeEach(async () => {
      await database.query('DELETE FROM orders');
    });
    afterAll(async () => {
      await direct.end();
      await db.drop();
    });

    it('holds the answer back until the outcome is stored: the client gets nothing while the write waits on a row lock', async () => {
      const config = idempotency({ ...SHOP_OPTIONS, store: postgresStore(database) });
      const state: ShopState = { runs: [], errors: [], gate: gate() };
      const server = await framework.start(config, database, state);
      const locker = await direct.connect();
      try {
        const key = newKey();
        const first = postOrder(server.url, key, { sku: 'HANG' });
        let received = false;
        void first.then(() => (received = true));
        await waitFor(async () => state.runs.length === 1 && (await snapshot(database, key))?.state === 'in_progress');
        await locker.query('BEGIN');
        await locker.query('SELECT 1 FROM retrysafe_operations WHERE key = $1 FOR UPDATE', [key]);
        state.gate.open();
        // The route has answered and the finishing write is blocked behind the lock.
        await waitFor(async () => (await direct.query<{ n: number }>(BLOCKED_FINISH)).rows[0]?.n === 1);
        expect(received).toBe(false);
        await locker.query('COMMIT');
        expect((await first).status).toBe(201);
        expect((await snapshot(database, key))?.state).toBe('completed');
      } finally {
        locker.release();
        await server.close();
      }
    });

    it('still sends the route answer; the record stays in_progress until recovery marks it unknown, and the route never runs twice', async () => {
      const url = new URL(db.url);
      const proxy = await startSlowProxy({ host: url.hostname, port: Number(url.port) });
      url.port = String(proxy.port);
      const proxied = new pg.Pool({ connectionString: url.toString(), max: 4, connectionTimeoutMillis: 1000 });
      proxied.on('error', () => {});
      const events: RetrysafeEvent[] = [];
      const config = idempotency({
        ...SHOP_OPTIONS,
        store: postgresStore(portable(fromPg(proxied))),
        observers: [(event) => events.push(event)],
      });
      const state: ShopState = { runs: [], errors: [], gate: gate() };
      const server = await framework.start(config, database, state);
      let recovered: { close(): Promise<void> } | undefined;
      try {
        const key = newKey();
        const first = postOrder(server.url, key, { sku: 'HANG' });
        await waitFor(async () => state.runs.length === 1 && (await snapshot(database, key))?.state === 'in_progress');
        await proxy.close();
        state.gate.open();

        const answer = await first;
        expect(answer.status).toBe(201);
        expect(answer.json).toMatchObject({ sku: 'HANG' });
        expect(events).toContainEqual(expect.objectContaining({ type: 'store-error' }));
        // Nothing was lost silently: neither dropped nor falsely finished.
        const left = await snapshot(database, key);
        expect(left).toMatchObject({ state: 'in_progress', mode: 'transparent', response_status: null });
        expect(left?.owner_token).not.toBeNull();

        // A retry while the store is still unreachable: 503, and the route does not run.
        const meanwhile = await postOrder(server.url, key, { sku: 'HANG' });
        expectProblem(meanwhile, 'store-unavailable', 503);

        // The lease runs out, since nobody renews it; the recovery worker marks the outcome unknown.
        await database.query(
          "UPDATE retrysafe_operations SET lease_expires_at = now() - interval '1 second' WHERE key = $1",
          [key],
        );
        const healthy = idempotency({ ...SHOP_OPTIONS, store: postgresStore(database) });
        expect(await new RecoveryWorker({ config: healthy, operations: [] }).runOnce()).toMatchObject({
          examined: 1,
          unknown: 1,
        });
        expect((await snapshot(database, key))?.state).toBe('unknown');

        const restarted = await framework.start(healthy, database, state);
        recovered = restarted;
        expectProblem(await postOrder(restarted.url, key, { sku: 'HANG' }), 'outcome-unknown', 409);
        expect(state.runs).toHaveLength(1);
        expect((await direct.query<{ n: number }>('SELECT count(*)::int AS n FROM orders')).rows[0]?.n).toBe(1);
      } finally {
        await server.close();
        await recovered?.close();
        await proxied.end();
      }
    });
  },
);
