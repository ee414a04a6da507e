import { createServer } from 'node:net';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fromPg, migrate, portable } from '../../src/postgres/index.js';
import type { IdempotencyOptions } from '../../src/index.js';
import type { SqlClient } from '../../src/store/sql-client.js';
import { adapters, ORDERS_TABLE, type RunningApp, startApp } from '../support/apps.js';
import { createMigratedDatabase, type TestDatabase } from '../support/database.js';
import { send } from '../support/http.js';
import { type SlowProxy, startSlowProxy } from '../support/slow-proxy.js';
import { expectProblem, newKey } from './harness.js';
import { waitFor } from '../support/wait-for.js';

/**
 * These run on node-postgres only: PGlite is in-process, so there is no
 * connection to refuse or to slow down.
 */
const body = { sku: 'A', qty: 1 };
const post = (app: RunningApp, key: string) =>
  send('POST', `${app.url}/orders`, {
    headers: { Authorization: 'Bearer token-a', 'Idempotency-Key': key },
    body,
    timeoutMs: 15_000,
  });

describe.each(adapters)('store failures on postgres (node-postgres) through $name', (adapter) => {
  describe('when the store is unreachable', () => {
    let pool: pg.Pool;
    let app: RunningApp;
    beforeAll(async () => {
      pool = new pg.Pool({
        connectionString: `postgres://postgres:postgres@127.0.0.1:${await closedPort()}/none`,
        connectionTimeoutMillis: 500,
      });
      pool.on('error', () => {});
      app = await startApp(adapter, portable(fromPg(pool)), { retryAfterSeconds: 3 });
    });
    afterAll(async () => {
      await app.close();
      await pool.end();
    });

    it('answers 503 store-unavailable with Retry-After, and the handler never runs', async () => {
      const res = await post(app, newKey());
      expectProblem(res, 'store-unavailable', 503);
      expect(res.headers['retry-after']).toBe('3');
      expect(app.state.invocations).toHaveLength(0);
      expect(app.state.errors).toHaveLength(0);
    });

    it('still checks the key first: a malformed key is 400, not 503', async () => {
      expectProblem(await post(app, 'a b'), 'idempotency-key-invalid', 400);
    });
  });

  describe('when the store is slower than storeTimeoutMs (500 ms), behind a proxy that stalls', () => {
    let db: TestDatabase;
    let direct: pg.Pool;
    let proxy: SlowProxy;
    beforeAll(async () => {
      db = await createMigratedDatabase();
      direct = new pg.Pool({ connectionString: db.url, max: 2 });
      const database = portable(fromPg(direct));
      await migrate(database);
      await database.query(ORDERS_TABLE);
      const url = new URL(db.url);
      proxy = await startSlowProxy({ host: url.hostname, port: Number(url.port) });
    });
    afterAll(async () => {
      await proxy.close();
      await direct.end();
      await db.drop();
    });

    /** An app whose store goes through the proxy; `warm` opens a pooled connection before the test stalls it. */
    async function slowStoreApp(
      options: { warm: boolean; settings?: Omit<IdempotencyOptions<SqlClient>, 'store'> },
      run: (app: RunningApp, pool: pg.Pool) => Promise<void>,
    ): Promise<void> {
      const url = new URL(db.url);
      url.port = String(proxy.port);
      const pool = new pg.Pool({ connectionString: url.toString(), max: 4 });
      pool.on('error', () => {});
      // The claim's budget is storeTimeoutMs plus lockTimeoutMs (3000 ms by default), since a claim may
      // rightly wait that long behind a running duplicate: a stall there answers after about 3.5 s.
      const settings: Omit<IdempotencyOptions<SqlClient>, 'store'> = { storeTimeoutMs: 500, ...options.settings };
      const app = await startApp(adapter, portable(fromPg(pool)), settings);
      try {
        if (options.warm) await pool.query('SELECT 1');
        await run(app, pool);
      } finally {
        proxy.resume();
        await app.close();
        await pool.end();
      }
    }

    async function expectNothingHappened(app: RunningApp, pool: pg.Pool, key: string): Promise<void> {
      proxy.resume();
      // The abandoned attempt reaches the database late; wait until it has let go of its connection.
      await waitFor(() => pool.waitingCount === 0 && pool.idleCount === pool.totalCount);
      expect(app.state.invocations).toHaveLength(0);
      const { rows } = await direct.query<{ orders: number; records: number }>(
        'SELECT (SELECT count(*)::int FROM orders) AS orders, (SELECT count(*)::int FROM retrysafe_operations WHERE key = $1) AS records',
        [key],
      );
      expect(rows[0]).toEqual({ orders: 0, records: 0 });
      // Nothing was claimed or stored: the retry runs now that the store answers.
      const retry = await post(app, key);
      expect(retry.status).toBe(201);
      expect(retry.headers['idempotent-replayed']).toBeUndefined();
      expect(app.state.invocations).toHaveLength(1);
      await direct.query('DELETE FROM orders');
    }

    it('answers normally while the proxy forwards', async () => {
      await slowStoreApp({ warm: false }, async (app) => {
        const res = await post(app, newKey());
        expect(res.status).toBe(201);
        await direct.query('DELETE FROM orders');
      });
    });

    it.each([
      { connection: 'an open', warm: true },
      { connection: 'a new', warm: false },
    ])(
      'answers 503 instead of hanging when $connection connection stalls, and the handler never runs',
      async ({ warm }) => {
        await slowStoreApp({ warm }, async (app, pool) => {
          const key = newKey();
          proxy.stall();
          const res = await post(app, key);
          expectProblem(res, 'store-unavailable', 503);
          expect(res.headers['retry-after']).toBe('1');
          expect(app.state.invocations).toHaveLength(0);
          await expectNothingHappened(app, pool, key);
        });
      },
    );

    /**
     * The rollback after a decided answer is a store phase too: a stall there
     * must not hold an answer for longer than the budget. The stall lasts far
     * longer than the budget (1 s), and the answer must come before it ends.
     */
    describe('when the store stalls just before the rollback', () => {
      const STALL_MS = 20_000;
      /** Budget 1 s; the claim answers replays, and the proxy stalls at the event `type` once `armed()` says so. */
      const stallAt = (type: string, armed: () => boolean = () => true) => ({
        storeTimeoutMs: 1_000,
        readBeforeClaim: 'never' as const,
        observers: [(event: { readonly type: string }) => event.type === type && armed() && proxy.stall()],
      });
      /** Sends, and fails if no answer came before the stall would end. */
      const beforeStallEnds = async (app: RunningApp, key: string, sku: string) => {
        const resumed = setTimeout(() => proxy.resume(), STALL_MS);
        try {
          return await send('POST', `${app.url}/orders`, {
            headers: { Authorization: 'Bearer token-a', 'Idempotency-Key': key },
            body: { sku, qty: 1 },
            timeoutMs: STALL_MS - 2_000,
          });
        } finally {
          clearTimeout(resumed);
          proxy.resume();
        }
      };

      it.each([
        { answer: 'a replay', event: 'replayed', sku: 'A', status: 201, replayed: 'true' },
        { answer: 'a fingerprint mismatch', event: 'fingerprint-mismatch', sku: 'B', status: 422, replayed: undefined },
      ])(
        'answers $answer within the budget, not when the stall ends',
        async ({ event, sku, status, replayed }) => {
          const key = newKey();
          let stalling = false;
          await slowStoreApp({ warm: true, settings: stallAt(event, () => stalling) }, async (app, pool) => {
            expect((await post(app, key)).status).toBe(201);
            stalling = true;
            const res = await beforeStallEnds(app, key, sku);
            expect(res.status).toBe(status);
            expect(res.headers['idempotent-replayed']).toBe(replayed);
            await waitFor(() => pool.waitingCount === 0 && pool.idleCount === pool.totalCount);
            expect(app.state.invocations).toHaveLength(1);
            await direct.query('DELETE FROM orders');
          });
        },
        40_000,
      );

      it("answers the handler's unstored 5xx within the budget, and stores nothing", async () => {
        const key = newKey();
        await slowStoreApp({ warm: true, settings: stallAt('finished') }, async (app, pool) => {
          const res = await beforeStallEnds(app, key, 'A-500');
          expect(res.status).toBe(500);
          await waitFor(() => pool.waitingCount === 0 && pool.idleCount === pool.totalCount);
          const { rows } = await direct.query<{ orders: number; records: number }>(
            'SELECT (SELECT count(*)::int FROM orders) AS orders, (SELECT count(*)::int FROM retrysafe_operations WHERE key = $1) AS records',
            [key],
          );
          expect(rows[0]).toEqual({ orders: 0, records: 0 });
        });
      }, 40_000);
    });

    it('answers 503 when the store stalls after the handler ran; the late commit is then replayed, one row either way', async () => {
      await slowStoreApp({ warm: true }, async (app, pool) => {
        const key = newKey();
        app.state.beforeReply = () => proxy.stall();
        const res = await post(app, key);
        expectProblem(res, 'store-unavailable', 503);
        expect(app.state.invocations).toHaveLength(1);
        app.state.beforeReply = undefined;
        proxy.resume();
        await waitFor(() => pool.waitingCount === 0 && pool.idleCount === pool.totalCount);
        // The abandoned transaction finished once the store answered: its outcome is stored, and the retry replays it.
        const retry = await post(app, key);
        expect(retry.status).toBe(201);
        expect(retry.headers['idempotent-replayed']).toBe('true');
        expect(app.state.invocations).toHaveLength(1);
        const { rows } = await direct.query<{ n: number }>('SELECT count(*)::int AS n FROM orders');
        expect(rows[0]?.n).toBe(1);
        await direct.query('DELETE FROM orders');
      });
    });
  });
});

/** A port on 127.0.0.1 that nothing listens on. */
async function closedPort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const address = probe.address();
  await new Promise((resolve) => probe.close(resolve));
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
}
