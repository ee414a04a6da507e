import pg from 'pg';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { fromPg, migrate, portable } from '../../src/postgres/index.js';
import { adapters, ORDERS_TABLE, type RunningApp, startApp } from '../support/apps.js';
import { createMigratedDatabase, type TestDatabase } from '../support/database.js';
import { send } from '../support/http.js';
import { expectProblem, newKey } from './harness.js';
import { waitFor } from '../support/wait-for.js';

/**
 * A backend that goes away while a handler is inside its transaction (a
 * failover, a restart, `pg_terminate_backend`): node-postgres emits 'error' on
 * the checked-out client, which must not end the process. node-postgres only:
 * PGlite has no connection to lose.
 */
const APPLICATION = 'retrysafe-terminated-backend';
const post = (app: RunningApp, key: string) =>
  send('POST', `${app.url}/orders`, {
    headers: { Authorization: 'Bearer token-a', 'Idempotency-Key': key },
    body: { sku: 'A', qty: 1 },
    timeoutMs: 15_000,
  });

describe.each(adapters)('a backend terminated mid-transaction, through $name', (adapter) => {
  let db: TestDatabase;
  let admin: pg.Pool;
  let pool: pg.Pool;
  let app: RunningApp;
  beforeAll(async () => {
    db = await createMigratedDatabase();
    admin = new pg.Pool({ connectionString: db.url, max: 2 });
    await migrate(fromPg(admin));
    await admin.query(ORDERS_TABLE);
    pool = new pg.Pool({ connectionString: db.url, max: 4, application_name: APPLICATION });
    // Idle clients are the pool's to guard, as every application must; checked-out ones are retrysafe's.
    pool.on('error', () => {});
    app = await startApp(adapter, portable(fromPg(pool)), { retryAfterSeconds: 2 });
  });
  afterAll(async () => {
    await app.close();
    await pool.end();
    await admin.end();
    await db.drop();
  });
  beforeEach(async () => {
    app.state.beforeReply = undefined;
    app.state.invocations.length = 0;
    await admin.query('DELETE FROM orders');
  });

  /** Terminates every backend of the app that sits inside a transaction, and waits until they are gone. */
  async function terminateInTransaction(): Promise<void> {
    const { rows } = await admin.query<{ pid: number }>(
      "SELECT pid FROM pg_stat_activity WHERE application_name = $1 AND state LIKE 'idle in transaction%'",
      [APPLICATION],
    );
    expect(rows).toHaveLength(1);
    await admin.query(
      'SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1 AND state LIKE $2',
      [APPLICATION, 'idle in transaction%'],
    );
    await waitFor(
      async () =>
        (await admin.query('SELECT 1 FROM pg_stat_activity WHERE pid = $1', [rows[0]?.pid])).rows.length === 0,
    );
  }

  it('answers 503 store-unavailable with Retry-After, keeps serving, and the retry runs once', async () => {
    const key = newKey();
    app.state.beforeReply = terminateInTransaction;
    const res = await post(app, key);
    expectProblem(res, 'store-unavailable', 503);
    expect(res.headers['retry-after']).toBe('2');
    app.state.beforeReply = undefined;

    // Nothing committed: the retry runs, on a healthy connection, and so do the next requests.
    const retry = await post(app, key);
    expect(retry.status).toBe(201);
    expect(retry.headers['idempotent-replayed']).toBeUndefined();
    for (let i = 0; i < 6; i++) expect((await post(app, newKey())).status).toBe(201);
    const { rows } = await admin.query<{ n: number }>('SELECT count(*)::int AS n FROM orders');
    expect(rows[0]?.n).toBe(7);
    expect(app.state.errors).toHaveLength(0);
  });

  it('discards the broken client instead of returning it to the pool', async () => {
    app.state.beforeReply = terminateInTransaction;
    expectProblem(await post(app, newKey()), 'store-unavailable', 503);
    // Every client the pool keeps has a live backend.
    await waitFor(() => pool.waitingCount === 0 && pool.idleCount === pool.totalCount);
    const { rows } = await admin.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = $1',
      [APPLICATION],
    );
    expect(rows[0]?.n).toBe(pool.totalCount);
  });
});
