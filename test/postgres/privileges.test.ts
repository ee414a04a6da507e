import { randomBytes, randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { atomic, type FetchRequest, leased } from '../../src/adapters/fetch/index.js';
import type { AtomicRoute } from '../../src/core/route.js';
import { idempotency } from '../../src/modes/idempotency.js';
import type { LeasedRoute } from '../../src/modes/leased-route.js';
import { enqueue, type OutboxMessage, Relay } from '../../src/outbox/index.js';
import { fromPg, maintenanceStore, migrate, portable, postgresStore } from '../../src/postgres/index.js';
import { Sweeper } from '../../src/retention/sweeper.js';
import type { SqlClient, SqlDatabase } from '../../src/store/sql-client.js';
import { retrysafe } from '../cli/run-cli.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { codeBlocks } from '../support/markdown-blocks.js';
import { insertRecord } from '../retention/records.js';

/**
 * The roles and grants of docs/operations.md, run as written there (its `sql privileges=…` blocks), on the
 * PostgreSQL server only: PGlite has no roles. Roles belong to the whole server, which other test files share:
 * each name gets a suffix of this run's own, and nothing else of the SQL changes.
 */
const suffix = randomBytes(4).toString('hex');
const ROLE = /\bretrysafe_(owner|app|operator)\b/g;
const documented = (name: string): string => {
  const block = codeBlocks(fileURLToPath(new URL('../../docs/operations.md', import.meta.url))).find(
    (b) => b.language === 'sql' && b.attributes.get('privileges') === name,
  );
  if (block === undefined) throw new Error(`docs/operations.md has no \`sql privileges=${name}\` block.`);
  return block.code.replace(ROLE, (role) => `${role}_${suffix}`);
};
const role = (name: 'owner' | 'app' | 'operator') => `retrysafe_${name}_${suffix}`;
/** The logins' password, set as the page says to for a server that asks for one (the embedded server does). */
const password = randomBytes(12).toString('hex');

/** The SQLSTATE a refused privilege raises. */
const INSUFFICIENT_PRIVILEGE = '42501';

describe('the documented database roles, on the PostgreSQL server', () => {
  let db: TestDatabase;
  const pools: pg.Pool[] = [];
  const urlAs = (name: 'owner' | 'app' | 'operator') => {
    const url = new URL(db.url);
    url.username = role(name);
    url.password = password;
    return url.toString();
  };
  const connect = (url: string) => {
    const pool = new pg.Pool({ connectionString: url, max: 4 });
    pool.on('error', () => {});
    pools.push(pool);
    return pool;
  };
  let admin: pg.Pool;
  let app: SqlDatabase<SqlClient>;
  let operatorPool: pg.Pool;

  beforeAll(async () => {
    db = await createTestDatabase();
    admin = connect(db.url);
    await admin.query(documented('roles'));
    for (const name of ['owner', 'app', 'operator'] as const)
      await admin.query(`ALTER ROLE ${role(name)} PASSWORD '${password}'`);
    await migrate(fromPg(connect(urlAs('owner'))));
    await connect(urlAs('owner')).query(documented('grants'));
    // The application's own tables are the application's to grant.
    await admin.query('CREATE TABLE orders (id serial PRIMARY KEY, tenant text NOT NULL, sku text NOT NULL)');
    await admin.query(
      `GRANT SELECT, INSERT ON orders TO ${role('app')}; GRANT USAGE ON SEQUENCE orders_id_seq TO ${role('app')}`,
    );
    app = portable(fromPg(connect(urlAs('app'))));
    operatorPool = connect(urlAs('operator'));
  });
  afterAll(async () => {
    await Promise.all(pools.map((pool) => pool.end()));
    await db?.drop();
    const server = new pg.Client({ connectionString: inject('adminDatabaseUrl') });
    await server.connect();
    await server.query(`DROP ROLE IF EXISTS ${role('operator')}, ${role('app')}, ${role('owner')}`);
    await server.end();
  });

  const request = (path: string, key: string, body: unknown) =>
    new Request(`http://shop.test${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'idempotency-key': key, 'x-tenant': 'tenant-a' },
      body: JSON.stringify(body),
    });

  /** One key sent twice: created, then the same answer replayed. */
  const createdThenReplayed = async (
    send: (request: Request, context: undefined) => Promise<Response>,
    path: string,
    body: unknown,
  ) => {
    const key = randomUUID();
    const first = await send(request(path, key, body), undefined);
    expect(first.status).toBe(201);
    const replay = await send(request(path, key, body), undefined);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(await replay.text()).toBe(await first.text());
  };

  it('lets the application run an atomic route and replay it', async () => {
    const route: AtomicRoute<FetchRequest, { sku: string }, SqlClient> = {
      operation: 'orders.create@1',
      tenant: ({ request }) => request.headers.get('x-tenant') ?? undefined,
      async handler({ tx, tenant, input }) {
        const { rows } = await tx.query<{ id: number }>(
          'INSERT INTO orders (tenant, sku) VALUES ($1, $2) RETURNING id',
          [tenant, input.sku],
        );
        return { status: 201, body: { id: rows[0]?.id } };
      },
    };
    const failures: unknown[] = [];
    const config = idempotency({ store: postgresStore(app), activity: { onError: (error) => failures.push(error) } });
    await createdThenReplayed(atomic(config, route), '/orders', { sku: 'W-1' });
    // Its activity counts too, added as the application's role.
    await config.close();
    expect(failures).toEqual([]);
    const { rows } = await admin.query<{ kind: string; n: string }>(
      `SELECT kind, sum(n)::text AS n FROM retrysafe_activity WHERE operation = 'orders.create@1' GROUP BY kind ORDER BY kind`,
    );
    expect(rows).toEqual([
      { kind: 'new', n: '1' },
      { kind: 'replay', n: '1' },
    ]);
  });

  it('lets the application run a leased route with a step, and replay it', async () => {
    let steps = 0;
    const route: LeasedRoute<FetchRequest, { order: string }, SqlClient> = {
      operation: 'payments.create@1',
      tenant: ({ request }) => request.headers.get('x-tenant') ?? undefined,
      async handler({ input, step, local, identity }) {
        const charge = await step('charge', (call) => {
          steps += 1;
          return Promise.resolve({ id: `ch_${call.idempotencyKey.slice(0, 8)}` });
        });
        const id = await local(
          'record',
          async (tx) =>
            (
              await tx.query<{ id: number }>('INSERT INTO orders (tenant, sku) VALUES ($1, $2) RETURNING id', [
                identity.tenant,
                input.order,
              ])
            ).rows[0]?.id,
        );
        return { status: 201, body: { id, charge: charge.id } };
      },
    };
    await createdThenReplayed(leased(idempotency({ store: postgresStore(app) }), route), '/payments', { order: 'o-1' });
    expect(steps).toBe(1);
  });

  it('lets the application sweep expired records', async () => {
    await admin.query("UPDATE retrysafe_operations SET response_expires_at = now() - interval '1 second'");
    const report = await new Sweeper({ store: maintenanceStore(app) }).runOnce();
    expect(report.tombstoned).toBeGreaterThanOrEqual(2);
  });

  it('lets the application enqueue to the outbox and relay it', async () => {
    const published: OutboxMessage[] = [];
    const id = await app.transaction((tx) => enqueue(tx, { topic: 'orders.created', payload: { order: 1 } }));
    const relay = new Relay({
      database: app,
      transport: {
        publish(message) {
          published.push(message);
          return Promise.resolve('stored' as const);
        },
      },
    });
    expect((await relay.runOnce()).delivered).toBe(1);
    expect(published.map((message) => message.id)).toEqual([id]);
  });

  it('lets the operator run the command line', async () => {
    for (const args of [['stuck'], ['sweep'], ['inspect', 'tenant-a', 'orders.create@1', randomUUID()]]) {
      const run = await retrysafe(args, { DATABASE_URL: urlAs('operator') });
      expect(run.stderr).not.toMatch(/permission denied/);
      expect(run.code === 0 || args[0] === 'inspect').toBe(true);
    }
  }, 60_000);

  it('names every table and function of the schema in the documented grants, so that a new one is not left out', async () => {
    const grants = documented('grants');
    const { rows } = await admin.query<{ name: string }>(
      `SELECT tablename AS name FROM pg_tables WHERE schemaname = 'public' AND tablename LIKE 'retrysafe%'
       UNION ALL
       SELECT proname FROM pg_proc WHERE pronamespace = 'public'::regnamespace AND proname LIKE 'retrysafe%'`,
    );
    expect(rows.length).toBeGreaterThan(8);
    for (const { name } of rows) expect(grants, name).toMatch(new RegExp(`\\b${name}\\b`));
  });

  it('lets the operator act through the command line, each action recorded, and keeps that record append-only', async () => {
    const records = portable(fromPg(admin));
    const [unknown, finished] = [randomUUID(), randomUUID()];
    await insertRecord(records, { tenant: 'tenant-a', key: unknown, state: 'unknown', mode: 'leased' });
    await insertRecord(records, { tenant: 'tenant-a', key: finished, state: 'completed' });
    const letter = randomUUID();
    await admin.query(
      `INSERT INTO retrysafe_outbox (id, topic, payload, state, attempts, last_error, parked_at)
       VALUES ($1, 'orders.created', '{}', 'dead', 8, 'broker refused: 503', now())`,
      [letter],
    );
    const asOperator = (args: readonly string[]) => retrysafe(args, { DATABASE_URL: urlAs('operator') });
    const done = async (args: readonly string[]) => {
      const run = await asOperator(args);
      expect(run.stderr).toBe('');
      expect(run.code).toBe(0);
      return run.stdout;
    };
    await done([
      'resolve',
      'tenant-a',
      'orders.create@1',
      unknown,
      '--state',
      'failed',
      '--status',
      '409',
      '--reason',
      'no charge',
    ]);
    await done(['purge', 'tenant-a', 'orders.create@1', finished, '--reason', 'test data', '--yes']);
    const listed = JSON.parse(await done(['dead-letters', '--json'])) as { items: { id: string; version: string }[] };
    const version = listed.items.find((item) => item.id === letter)?.version ?? '';
    await done(['requeue', letter, '--version', version, '--reason', 'broker back']);
    expect(
      (await admin.query<{ action: string }>('SELECT action FROM retrysafe_operator_actions ORDER BY action')).rows,
    ).toEqual([{ action: 'purge' }, { action: 'requeue' }, { action: 'resolve' }]);
    // Who did what stays as it was written: neither the application nor an operator rewrites or deletes it.
    for (const pool of [operatorPool, connect(urlAs('app'))])
      for (const statement of [
        "UPDATE retrysafe_operator_actions SET reason = 'nothing'",
        'DELETE FROM retrysafe_operator_actions',
      ])
        await expect(pool.query(statement)).rejects.toMatchObject({ code: INSUFFICIENT_PRIVILEGE });
  }, 60_000);

  it.each([
    'DROP TABLE retrysafe_operations CASCADE',
    'TRUNCATE retrysafe_operations CASCADE',
    'ALTER TABLE retrysafe_operations ADD COLUMN note text',
    'ALTER TABLE retrysafe_outbox DISABLE TRIGGER ALL',
    'CREATE TABLE retrysafe_extra (id integer)',
    'DELETE FROM retrysafe_migrations',
  ])('refuses the application and the operator: %s', async (statement) => {
    for (const pool of [connect(urlAs('app')), operatorPool]) {
      await expect(pool.query(statement)).rejects.toMatchObject({ code: INSUFFICIENT_PRIVILEGE });
    }
    expect(
      (await admin.query<{ n: number }>('SELECT count(*)::int AS n FROM retrysafe_operations')).rows[0]?.n,
    ).toBeGreaterThan(0);
  });

  it('refuses the application a migration', async () => {
    await expect(migrate(app)).rejects.toMatchObject({ code: INSUFFICIENT_PRIVILEGE });
  });
});
