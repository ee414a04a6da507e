import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { setImmediate } from 'node:timers/promises';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ServiceProcess, startProcess } from '../../examples/orders/testing/child.js';
import { fromPg } from '../../src/postgres/index.js';
import { type Cluster, createCluster } from './support/cluster.js';
import { cartKeys, expectOrdersSettled } from './support/order-checks.js';
import { type Pooler, startPgBouncer } from './support/pgbouncer.js';
import { placeOrder, putCarts, storm } from './support/storm.js';
import { waitFor } from '../support/wait-for.js';

const KEYS = 60;

describe('PgBouncer 1.18 in transaction pooling mode between the service and PostgreSQL', () => {
  let cluster: Cluster & { dispose(): Promise<void> };
  let pooler: Pooler;
  let dataDir: string;
  let service: ServiceProcess | undefined;
  beforeAll(async () => {
    cluster = await createCluster('pooler');
    await cluster.query('CREATE DATABASE orders');
    pooler = await startPgBouncer({ host: '127.0.0.1', port: cluster.port });
    dataDir = await mkdtemp(join(tmpdir(), 'orders-pooler-'));
  });
  afterAll(async () => {
    await service?.kill('SIGKILL');
    await pooler?.close();
    await cluster?.dispose();
    await rm(dataDir, { recursive: true, force: true });
  });

  it('loses named prepared statements between server connections, and works with preparedStatements: false', async () => {
    // Two client connections: while the first holds a server connection in a transaction, the second's next
    // transaction gets another server connection, where its statement was never prepared.
    const holder = new pg.Client({ connectionString: pooler.url('orders') });
    const pool = new pg.Pool({ connectionString: pooler.url('orders'), max: 1 });
    await holder.connect();
    try {
      const statement = { name: 'retrysafe_probe', text: 'SELECT $1::int AS n' };
      const named = fromPg(pool);
      const unnamed = fromPg(pool, { preparedStatements: false });
      await named.transaction((sql) => sql.query(statement, [1]));
      await holder.query('BEGIN');
      await holder.query('SELECT 1');
      const lost = await named
        .transaction((sql) => sql.query(statement, [2]))
        .then(
          () => 'prepared',
          (error: { code?: string }) => error.code,
        );
      expect(lost).toBe('26000');
      const rows = await unnamed.transaction((sql) => sql.query<{ n: number }>(statement, [3]));
      expect(rows.rows).toEqual([{ n: 3 }]);
      await holder.query('COMMIT');
    } finally {
      await holder.end();
      await pool.end();
    }
  });

  it('is detected with named statements left on: a statement found elsewhere runs again unnamed, and the pool names none after it', async () => {
    const warnings: string[] = [];
    const onWarning = (warning: Error): void => {
      if ((warning as { code?: string }).code === 'RETRYSAFE_POOLER_DETECTED') warnings.push(warning.message);
    };
    process.on('warning', onWarning);
    const holder = new pg.Client({ connectionString: pooler.url('orders') });
    const missing = new pg.Pool({ connectionString: pooler.url('orders'), max: 1 });
    const twice = new pg.Pool({ connectionString: pooler.url('orders'), max: 2 });
    await holder.connect();
    try {
      // 26000: prepared on the first server connection, then sent as prepared while the holder has that one.
      const statement = { name: 'retrysafe_detect', text: 'SELECT $1::int AS n' };
      const database = fromPg(missing);
      await database.transaction((sql) => sql.query(statement, [1]));
      await holder.query('BEGIN');
      await holder.query('SELECT 1');
      // A statement on its own runs again unnamed: the caller sees its rows, not the error.
      expect((await database.query(statement, [2])).rows).toEqual([{ n: 2 }]);
      // In a transaction, on another server connection than the first: nothing is named any more.
      expect((await database.transaction((sql) => sql.query(statement, [3]))).rows).toEqual([{ n: 3 }]);
      await holder.query('COMMIT');

      // 42P05: a second client connection prepares the name again on the server connection the first prepared it on.
      const other = { name: 'retrysafe_detect_twice', text: 'SELECT $1::int AS n' };
      const again = fromPg(twice);
      await again.transaction((sql) => sql.query(other, [1]));
      const first = await twice.connect();
      try {
        expect((await again.query(other, [2])).rows).toEqual([{ n: 2 }]);
      } finally {
        first.release();
      }
      expect((await again.transaction((sql) => sql.query(other, [3]))).rows).toEqual([{ n: 3 }]);
      // Process warnings are emitted on the next tick.
      await setImmediate();
    } finally {
      process.off('warning', onWarning);
      await holder.end();
      await missing.end();
      await twice.end();
    }
    expect(warnings).toEqual([expect.stringContaining('SQLSTATE 26000'), expect.stringContaining('SQLSTATE 42P05')]);
    expect(warnings[0]).toContain('preparedStatements: false');
  });

  it('serves a storm with named statements left on: the pooler is found, a few transactions in flight then answer 503 and are retried, one order per key', async () => {
    const named = await startProcess({ DATABASE_URL: pooler.url('orders'), DATA_DIR: dataDir });
    try {
      const keyOf = cartKeys('named', KEYS / 2);
      await putCarts(named.url, [...keyOf.values()]);
      const histories = await storm({
        services: () => [named.url],
        keys: [...keyOf.keys()],
        clientsPerKey: 3,
        spreadMs: 1_000,
        send: (to, key) => placeOrder(to, keyOf.get(key) ?? '', key),
      }).done;
      const count = async (sql: string) => (await cluster.query<{ n: number }>(sql, [], 'orders'))[0]?.n;
      await expectOrdersSettled(named, keyOf, histories, count);
      expect(named.output()).toContain('RETRYSAFE_POOLER_DETECTED');
      // A transaction fails only if it sent a named statement before naming stopped: at most one per connection
      // of the service's pool (20). Without the detection, every mismatch failed, dozens per storm.
      const refused = histories
        .flatMap((history) => history.attempts)
        .filter((attempt) => attempt.kind === 'answer' && attempt.answer.status === 503);
      expect(refused.length).toBeLessThanOrEqual(20);
    } finally {
      await named.kill('SIGKILL');
    }
  });

  it('serves a storm with DATABASE_POOLER=transaction: one order per key, the outbox delivered by polling, no setting left on a server connection', async () => {
    service = await startProcess({
      DATABASE_URL: pooler.url('orders'),
      DATABASE_POOLER: 'transaction',
      DATA_DIR: dataDir,
    });
    const url = service.url;
    const keyOf = cartKeys('pooled', KEYS);
    await putCarts(url, [...keyOf.values()]);
    // Three clients per key: duplicates wait on the claim, bounded by the claim's transaction-local lock_timeout.
    const histories = await storm({
      services: () => [url],
      keys: [...keyOf.keys()],
      clientsPerKey: 3,
      spreadMs: 2_000,
      send: (to, key) => placeOrder(to, keyOf.get(key) ?? '', key),
    }).done;
    const count = async (sql: string) => (await cluster.query<{ n: number }>(sql, [], 'orders'))[0]?.n;
    await expectOrdersSettled(service, keyOf, histories, count);
    await waitFor(
      async () => (await count("SELECT count(*)::int AS n FROM retrysafe_outbox WHERE state <> 'delivered'")) === 0,
      { what: 'the relay to deliver every order.created' },
    );
    expect(
      await count(
        "SELECT count(*)::int AS n FROM emails WHERE order_id IN (SELECT id FROM orders WHERE cart_id LIKE 'pooled-%')",
      ),
    ).toBe(KEYS);
    // Server connections the pooler hands out keep the server's defaults: nothing was SET outside a transaction.
    const through = new pg.Pool({ connectionString: pooler.url('orders'), max: 10 });
    try {
      const shown = await Promise.all(
        Array.from({ length: 20 }, () => through.query<{ lock_timeout: string }>('SHOW lock_timeout')),
      );
      expect(new Set(shown.map(({ rows }) => rows[0]?.lock_timeout))).toEqual(new Set(['0']));
    } finally {
      await through.end();
    }
  });
});
