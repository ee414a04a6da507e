import pg from 'pg';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { fromPg, migrate, portable, postgresStore } from '../../src/postgres/index.js';
import { adapters, ORDERS_TABLE, type RunningApp, startApp } from '../support/apps.js';
import { createMigratedDatabase, type TestDatabase } from '../support/database.js';
import { send } from '../support/http.js';
import { waitFor } from '../support/wait-for.js';
import { expectProblem, newKey } from './harness.js';

/**
 * The wait behind a duplicate (lockTimeoutMs) bounds the claim, not the
 * handler's own statements; those are bounded on the server by
 * statementTimeoutMs, and a handler statement that runs out says so. On
 * node-postgres: the locks are held by a second connection.
 */
const post = (app: RunningApp, key: string) =>
  send('POST', `${app.url}/orders`, {
    headers: { Authorization: 'Bearer token-a', 'Idempotency-Key': key },
    body: { sku: 'A', qty: 1 },
    timeoutMs: 20_000,
  });

describe.each(adapters)('bounds on the handler’s statements, through $name', (adapter) => {
  let db: TestDatabase;
  let pool: pg.Pool;
  let app: RunningApp;
  beforeAll(async () => {
    db = await createMigratedDatabase();
    pool = new pg.Pool({ connectionString: db.url, max: 6 });
    pool.on('error', () => {});
    const database = portable(fromPg(pool));
    await migrate(database);
    await database.query(ORDERS_TABLE);
    app = await startApp(adapter, database, { lockTimeoutMs: 200, statementTimeoutMs: 3_000 });
  });
  afterAll(async () => {
    await app.close();
    await pool.end();
    await db.drop();
  });
  beforeEach(() => pool.query('DELETE FROM orders'));

  /** Holds an exclusive lock on `orders` (the handler inserts there) until `release` is called. */
  async function lockOrders(): Promise<{ release(): Promise<void> }> {
    const holder = await pool.connect();
    await holder.query('BEGIN');
    await holder.query('LOCK TABLE orders IN EXCLUSIVE MODE');
    return {
      async release() {
        await holder.query('COMMIT');
        holder.release();
      },
    };
  }

  it('lets the handler wait for its own lock longer than a duplicate’s wait (lockTimeoutMs)', async () => {
    const lock = await lockOrders();
    const answer = post(app, newKey());
    // Released once the handler's INSERT has waited well past lockTimeoutMs (200 ms) by the server's clock, and so
    // before statementTimeoutMs (3 s) unless the machine stalls for over 2 s just then.
    await waitFor(
      async () =>
        (
          await pool.query<{ n: number }>(
            `SELECT count(*)::int AS n FROM pg_stat_activity
              WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE 'INSERT INTO orders%'
                AND clock_timestamp() - query_start > interval '600 milliseconds'`,
          )
        ).rows[0]?.n === 1,
      { what: 'the handler to wait on the lock longer than lockTimeoutMs' },
    );
    await lock.release();
    const res = await answer;
    expect(res.status).toBe(201);
    expect(app.state.errors).toHaveLength(0);
  });

  it('answers 503 statement-timeout, not store-unavailable, when a handler statement outlasts statementTimeoutMs; nothing is stored', async () => {
    const key = newKey();
    const lock = await lockOrders();
    let res;
    try {
      res = await post(app, key);
    } finally {
      await lock.release();
    }
    expectProblem(res, 'statement-timeout', 503);
    expect(res.headers['retry-after']).toBe('1');
    const { rows } = await pool.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM retrysafe_operations WHERE key = $1',
      [key],
    );
    expect(rows[0]?.n).toBe(0);
    expect((await post(app, key)).status).toBe(201);
  });

  it('sets statement_timeout for the rest of the claim’s transaction, and leaves the handler the session’s lock_timeout', async () => {
    const store = postgresStore(portable(fromPg(pool)));
    const identity = { tenant: 'tenant-a', operation: 'settings.read@1', key: newKey() };
    const seen = await store.atomic(
      { identity, fingerprint: new Uint8Array(32), lockTimeoutMs: 200, statementTimeoutMs: 3_000 },
      async ({ claim, tx }) => {
        expect(claim.kind).toBe('claimed');
        const { rows } = await tx.query<{ statement_timeout: string; lock_timeout: string }>(
          "SELECT current_setting('statement_timeout') AS statement_timeout, current_setting('lock_timeout') AS lock_timeout",
        );
        return { commit: false, value: rows[0] };
      },
      () => undefined,
    );
    expect(seen).toEqual({ statement_timeout: '3s', lock_timeout: '0' });
  });
});

/**
 * A tighter `statement_timeout` given to the application's role or connection
 * by its DBA still applies: the claim sets the smaller of it and
 * statementTimeoutMs for the rest of its transaction (0, no limit, is never
 * the smaller), so neither lifts the other.
 */
describe('a statement_timeout the sessions start with', () => {
  let db: TestDatabase;
  const pools: pg.Pool[] = [];
  beforeAll(async () => {
    db = await createMigratedDatabase();
    const pool = new pg.Pool({ connectionString: db.url, max: 1 });
    pools.push(pool);
    await migrate(portable(fromPg(pool)));
  });
  afterAll(async () => {
    await Promise.all(pools.map((pool) => pool.end()));
    await db.drop();
  });

  /** A store whose sessions start with `statement_timeout`, as `ALTER ROLE … SET` or the connection's options give it. */
  function storeWithSessionTimeout(statementTimeout: string) {
    const pool = new pg.Pool({ connectionString: db.url, max: 1, options: `-c statement_timeout=${statementTimeout}` });
    pools.push(pool);
    return postgresStore(portable(fromPg(pool)));
  }

  const claim = { fingerprint: new Uint8Array(32), lockTimeoutMs: 200 };
  const identity = () => ({ tenant: 'tenant-a', operation: 'settings.read@1', key: newKey() });

  it.each([
    ['200ms', 3_000, '200ms'],
    ['1min', 3_000, '3s'],
    ['0', 3_000, '3s'],
  ])('with %s, sets the smaller of it and statementTimeoutMs %d: %s', async (session, statementTimeoutMs, seen) => {
    const store = storeWithSessionTimeout(session);
    const setting = await store.atomic(
      { ...claim, identity: identity(), statementTimeoutMs },
      async ({ tx }) => {
        const { rows } = await tx.query<{ value: string }>("SELECT current_setting('statement_timeout') AS value");
        return { commit: false, value: rows[0]?.value };
      },
      () => undefined,
    );
    expect(setting).toBe(seen);
  });

  it('cancels a handler statement past the session’s limit though statementTimeoutMs would let it run', async () => {
    const store = storeWithSessionTimeout('200ms');
    const run = store.atomic(
      { ...claim, identity: identity(), statementTimeoutMs: 60_000 },
      async ({ tx }) => {
        await tx.query('SELECT pg_sleep(1)');
        return { commit: false, value: 'finished' };
      },
      () => 'taken',
    );
    await expect(run).rejects.toMatchObject({ code: 'statement-timeout' });
  });
});
