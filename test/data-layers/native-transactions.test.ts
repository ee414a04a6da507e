import { PrismaPg } from '@prisma/adapter-pg';
import { drizzle as drizzleNodePg } from 'drizzle-orm/node-postgres';
import { integer, type PgDatabase, type PgQueryResultHKT, pgTable, serial, text } from 'drizzle-orm/pg-core';
import { drizzle as drizzlePGlite } from 'drizzle-orm/pglite';
import { drizzle as drizzlePostgresJs } from 'drizzle-orm/postgres-js';
import knex from 'knex';
import { type Generated, Kysely, PostgresDialect, type Transaction } from 'kysely';
import pg from 'pg';
import postgres from 'postgres';
import { DataSource, EntitySchema } from 'typeorm';
import { afterAll, beforeAll, describe, expect, expectTypeOf, it } from 'vitest';
import {
  idempotency,
  isRetrysafeError,
  type RetrysafeEvent,
  type SqlClient,
  type SqlDatabase,
} from '../../src/index.js';
import { atomic } from '../../src/adapters/fetch/index.js';
import { consume } from '../../src/inbox/index.js';
import { enqueue } from '../../src/outbox/index.js';
import { drizzleRunner, fromDrizzle } from '../../src/postgres/clients/from-drizzle.js';
import { fromKnex, knexRunner } from '../../src/postgres/clients/from-knex.js';
import { fromKysely, kyselyRunner } from '../../src/postgres/clients/from-kysely.js';
import { fromPostgresJs, postgresJsRunner } from '../../src/postgres/clients/from-postgres-js.js';
import { fromPrisma, prismaRunner } from '../../src/postgres/clients/from-prisma.js';
import { fromTypeORM, typeormRunner } from '../../src/postgres/clients/from-typeorm.js';
import { migrate, portable, postgresStore } from '../../src/postgres/index.js';
import { ORDERS_TABLE } from '../support/apps.js';
import { createMigratedDatabase, createTestDatabase } from '../support/database.js';
import { migratedPGlite } from '../support/engines.js';
import type { PGlite } from '@electric-sql/pglite';
import { type Prisma, PrismaClient } from '../support/prisma/generated/client.js';

/** One data layer under test: its database, and an order written through the library's own API in its transaction. */
interface Layer<Tx> {
  readonly database: SqlDatabase<Tx>;
  readonly runner: (tx: Tx) => SqlClient;
  insertOrder(tx: Tx, tenant: string, sku: string): Promise<number>;
  end(): Promise<void>;
}

/** Types a layer by its database's transaction, so each library's own `tx` is checked in its `insertOrder`. */
function typed<Tx>(database: SqlDatabase<Tx>, rest: Omit<Layer<NoInfer<Tx>>, 'database'>): Layer<Tx> {
  return { database, ...rest };
}

interface Factory {
  readonly name: string;
  open(): Promise<Opened>;
}

/** A layer with its transaction type forgotten: the tests only pass each `tx` back to the same layer. */
interface Opened {
  readonly database: SqlDatabase<unknown>;
  enqueueIn(tx: unknown): SqlClient;
  insertOrder(tx: unknown, tenant: string, sku: string): Promise<number>;
  close(): Promise<void>;
}

function layer<Tx>(name: string, open: (url: string) => Layer<Tx> | Promise<Layer<Tx>>, onPGlite = false): Factory {
  return {
    name,
    async open() {
      const server = onPGlite ? undefined : await createMigratedDatabase();
      const opened = await open(server?.url ?? '');
      await migrate(portable(opened.database));
      await opened.database.query(ORDERS_TABLE);
      return {
        database: opened.database,
        enqueueIn: (tx) => opened.runner(tx as Tx),
        insertOrder: (tx, tenant, sku) => opened.insertOrder(tx as Tx, tenant, sku),
        async close() {
          await opened.end();
          await server?.drop();
        },
      };
    },
  };
}

const ordersTable = pgTable('orders', {
  id: serial('id').primaryKey(),
  tenant: text('tenant').notNull(),
  sku: text('sku').notNull(),
  qty: integer('qty').notNull(),
});

interface Schema {
  orders: { id: Generated<number>; tenant: string; sku: string; qty: number };
}

interface Order {
  id: number;
  tenant: string;
  sku: string;
  qty: number;
}

const orderEntity = new EntitySchema<Order>({
  name: 'Order',
  tableName: 'orders',
  columns: {
    id: { type: 'int', primary: true, generated: true },
    tenant: { type: 'text' },
    sku: { type: 'text' },
    qty: { type: 'int' },
  },
});

function pgPool(url: string): pg.Pool {
  const pool = new pg.Pool({ connectionString: url, max: 4 });
  pool.on('error', () => {});
  return pool;
}

const layers: readonly Factory[] = [
  layer('postgres.js', (url) => {
    const sql = postgres(url, { max: 4, onnotice: () => {} });
    return typed(fromPostgresJs(sql), {
      runner: postgresJsRunner,
      async insertOrder(tx, tenant, sku) {
        const [row] = await tx<
          { id: number }[]
        >`INSERT INTO orders (tenant, sku, qty) VALUES (${tenant}, ${sku}, 1) RETURNING id`;
        return row?.id ?? -1;
      },
      end: () => sql.end(),
    });
  }),
  layer('kysely', (url) => {
    const db = new Kysely<Schema>({ dialect: new PostgresDialect({ pool: pgPool(url) }) });
    return typed(fromKysely(db), {
      runner: kyselyRunner,
      async insertOrder(tx, tenant, sku) {
        return (await tx.insertInto('orders').values({ tenant, sku, qty: 1 }).returning('id').executeTakeFirstOrThrow())
          .id;
      },
      end: () => db.destroy(),
    });
  }),
  layer('drizzle (node-postgres)', (url) => {
    const pool = pgPool(url);
    const db = drizzleNodePg({ client: pool });
    return typed(fromDrizzle(db), { runner: drizzleRunner, insertOrder: drizzleInsert, end: () => pool.end() });
  }),
  layer('drizzle (postgres.js)', (url) => {
    const sql = postgres(url, { max: 4, onnotice: () => {} });
    return typed(fromDrizzle(drizzlePostgresJs({ client: sql })), {
      runner: drizzleRunner,
      insertOrder: drizzleInsert,
      end: () => sql.end(),
    });
  }),
  // Drizzle's PGlite driver runs one statement per query: its database comes migrated (by PGlite itself).
  layer(
    'drizzle (pglite)',
    async () => {
      const lite = await migratedPGlite();
      return typed(fromDrizzle(drizzlePGlite({ client: lite })), {
        runner: drizzleRunner,
        insertOrder: drizzleInsert,
        end: () => lite.close(),
      });
    },
    true,
  ),
  layer('prisma (adapter-pg)', (url) => {
    const prisma = new PrismaClient({ adapter: new PrismaPg({ connectionString: url, max: 4 }) });
    return typed(fromPrisma(prisma), {
      runner: prismaRunner,
      async insertOrder(tx, tenant, sku) {
        return (await tx.order.create({ data: { tenant, sku, qty: 1 } })).id;
      },
      end: () => prisma.$disconnect(),
    });
  }),
  layer('typeorm', async (url) => {
    const dataSource = await new DataSource({
      type: 'postgres',
      url,
      poolSize: 4,
      entities: [orderEntity],
    }).initialize();
    return typed(fromTypeORM(dataSource), {
      runner: typeormRunner,
      async insertOrder(tx, tenant, sku) {
        return (await tx.getRepository(orderEntity).save({ tenant, sku, qty: 1 })).id;
      },
      end: () => dataSource.destroy(),
    });
  }),
  layer('knex', (url) => {
    const db = knex({ client: 'pg', connection: url, pool: { min: 0, max: 4 } });
    return typed(fromKnex(db), {
      runner: knexRunner,
      async insertOrder(tx, tenant, sku) {
        const [row] = await tx<Order>('orders').insert({ tenant, sku, qty: 1 }).returning('id');
        return row?.id ?? -1;
      },
      end: () => db.destroy(),
    });
  }),
];

/** Drizzle's query builder is the same on every driver: `PgDatabase` and `PgTransaction` share `insert`. */
async function drizzleInsert(
  tx: Pick<PgDatabase<PgQueryResultHKT>, 'insert'>,
  tenant: string,
  sku: string,
): Promise<number> {
  const [row] = await tx.insert(ordersTable).values({ tenant, sku, qty: 1 }).returning({ id: ordersTable.id });
  return row?.id ?? -1;
}

describe.each(layers)('atomic mode, the outbox and the inbox in $name transactions', (factory) => {
  let under: Opened;
  beforeAll(async () => {
    under = await factory.open();
  });
  afterAll(() => under.close());

  const count = async (table: string): Promise<number> =>
    (await under.database.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${table}`)).rows[0]?.n ?? -1;

  /** `enqueue` through the data layer's runner, or through the database that handed out `tx`. */
  function route(fail: boolean, through: 'runner' | 'database' = 'runner') {
    const config = idempotency({ store: postgresStore(under.database) });
    return atomic(config, {
      operation: `orders.create@${fail ? 2 : 1}`,
      tenant: () => 'tenant-a',
      async handler({ tx, tenant }) {
        const id = await under.insertOrder(tx, tenant, 'SKU-1');
        const message = { topic: 'order.created', payload: { id } };
        await (through === 'runner' ? enqueue(under.enqueueIn(tx), message) : enqueue(under.database, tx, message));
        if (fail) throw new Error('the handler failed after its writes');
        return { status: 201, body: { id } };
      },
    });
  }

  const post = (key: string) =>
    new Request('http://orders.test/orders', {
      method: 'POST',
      headers: { 'idempotency-key': key, 'content-type': 'application/json' },
      body: '{}',
    });

  it("commits the handler's own writes, its outbox message and the answer together, and replays the answer", async () => {
    const [before, messages] = [await count('orders'), await count('retrysafe_outbox')];
    const create = route(false);
    const first = await create(post('key-commit'), undefined);
    const replay = await create(post('key-commit'), undefined);
    expect(first.status).toBe(201);
    expect(await replay.text()).toBe(await first.text());
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(await count('orders')).toBe(before + 1);
    expect(await count('retrysafe_outbox')).toBe(messages + 1);
  });

  it('rolls back the handler’s writes, its outbox message and the claim when the handler throws', async () => {
    const [before, messages, records] = [
      await count('orders'),
      await count('retrysafe_outbox'),
      await count('retrysafe_operations'),
    ];
    const create = route(true);
    await expect(create(post('key-rollback'), undefined)).rejects.toThrow('the handler failed after its writes');
    expect([await count('orders'), await count('retrysafe_outbox'), await count('retrysafe_operations')]).toEqual([
      before,
      messages,
      records,
    ]);
  });

  it('enqueues through the database that handed out tx, committed and rolled back with the handler', async () => {
    const [before, messages] = [await count('orders'), await count('retrysafe_outbox')];
    expect((await route(false, 'database')(post('key-database'), undefined)).status).toBe(201);
    await expect(route(true, 'database')(post('key-database-rollback'), undefined)).rejects.toThrow(
      'the handler failed after its writes',
    );
    expect([await count('orders'), await count('retrysafe_outbox')]).toEqual([before + 1, messages + 1]);
  });

  it('runs an inbox handler once per message, in the same transaction as its writes', async () => {
    const before = await count('orders');
    const handle = (tx: unknown) => under.insertOrder(tx, 'tenant-a', 'FROM-MESSAGE');
    const first = await consume(under.database, 'projector', 'message-1', handle);
    const again = await consume(under.database, 'projector', 'message-1', handle);
    expect([first.kind, again.kind]).toEqual(['processed', 'duplicate']);
    expect(await count('orders')).toBe(before + 1);
  });
});

describe('Drizzle: tx.rollback() in a handler', () => {
  // Opened in a hook, whose limit is longer: PGlite starts slowly on a machine whose cores are all busy.
  let lite: PGlite;
  beforeAll(async () => {
    lite = await migratedPGlite();
  });
  afterAll(() => lite?.close());

  it('rolls back the operation record with the writes, and the request fails with Drizzle’s error', async () => {
    const database = fromDrizzle(drizzlePGlite({ client: lite }));
    await database.query(ORDERS_TABLE);
    const create = atomic(idempotency({ store: postgresStore(database) }), {
      operation: 'orders.create@1',
      tenant: () => 'tenant-a',
      async handler({ tx }) {
        await drizzleInsert(tx, 'tenant-a', 'SKU-1');
        tx.rollback();
        return { status: 201, body: {} };
      },
    });
    const request = new Request('http://orders.test/orders', {
      method: 'POST',
      headers: { 'idempotency-key': 'k', 'content-type': 'application/json' },
      body: '{}',
    });
    await expect(create(request, undefined)).rejects.toThrow(/rollback/i);
    const { rows } = await database.query<{ orders: number; records: number }>(
      'SELECT (SELECT count(*)::int FROM orders) AS orders, (SELECT count(*)::int FROM retrysafe_operations) AS records',
    );
    expect(rows[0]).toEqual({ orders: 0, records: 0 });
  });
});

describe('Knex: trx.rollback() in a handler', () => {
  it('rolls back the writes; the operation record cannot be written after it, so the answer is 503 and nothing is stored', async () => {
    const server = await createMigratedDatabase();
    const db = knex({ client: 'pg', connection: server.url, pool: { min: 0, max: 2 } });
    try {
      const database = fromKnex(db);
      await migrate(database);
      await database.query(ORDERS_TABLE);
      const create = atomic(idempotency({ store: postgresStore(database) }), {
        operation: 'orders.create@1',
        tenant: () => 'tenant-a',
        async handler({ tx }) {
          await tx<Order>('orders').insert({ tenant: 'tenant-a', sku: 'SKU-1', qty: 1 });
          await tx.rollback(new Error('rolled back by the handler'));
          return { status: 201, body: {} };
        },
      });
      const request = new Request('http://orders.test/orders', {
        method: 'POST',
        headers: { 'idempotency-key': 'k', 'content-type': 'application/json' },
        body: '{}',
      });
      const answer = await create(request, undefined);
      expect([answer.status, ((await answer.json()) as { type: string }).type]).toEqual([
        503,
        'https://retrysafe.dev/problems/store-unavailable',
      ]);
      const { rows } = await database.query<{ orders: number; records: number }>(
        'SELECT (SELECT count(*)::int FROM orders) AS orders, (SELECT count(*)::int FROM retrysafe_operations) AS records',
      );
      expect(rows[0]).toEqual({ orders: 0, records: 0 });
    } finally {
      await db.destroy();
      await server.drop();
    }
  });
});

describe('TypeORM: a manager that runs no transaction', () => {
  it('is refused by the runner rather than run outside the transaction', () => {
    const dataSource = new DataSource({ type: 'postgres', url: 'postgres://unused@127.0.0.1:1/unused' });
    expect(
      isRetrysafeError(
        catchError(() => fromTypeORM(dataSource).runner(dataSource.manager)),
        'misuse',
      ),
    ).toBe(true);
  });
});

/**
 * Drizzle's `tx` and Knex's `trx` have their database's members: passed in its
 * place, retrysafe's transactions would be savepoints at the caller's level.
 */
describe('a data layer’s own transaction where its database is expected', () => {
  it('Drizzle: fromDrizzle(tx) is refused with misuse, saying why', async () => {
    const lite = await migratedPGlite();
    try {
      const refusal = await drizzlePGlite({ client: lite }).transaction((tx) =>
        Promise.resolve(catchError(() => fromDrizzle(tx))),
      );
      expect(isRetrysafeError(refusal, 'misuse')).toBe(true);
      expect(String(refusal)).toMatch(/not a transaction.*READ COMMITTED/);
    } finally {
      await lite.close();
    }
  });

  it('Knex: fromKnex(trx) is refused with misuse, saying why', async () => {
    const server = await createTestDatabase();
    const db = knex({ client: 'pg', connection: server.url, pool: { min: 0, max: 1 } });
    try {
      const refusal = await db.transaction((trx) => Promise.resolve(catchError(() => fromKnex(trx))));
      expect(isRetrysafeError(refusal, 'misuse')).toBe(true);
      expect(String(refusal)).toMatch(/not a transaction.*READ COMMITTED/);
    } finally {
      await db.destroy();
      await server.drop();
    }
  });
});

describe('Prisma: the interactive transaction timeout', () => {
  const prisma = new PrismaClient({
    adapter: new PrismaPg({ connectionString: 'postgres://unused@127.0.0.1:1/unused' }),
  });
  afterAll(() => prisma.$disconnect());

  it('is refused when it cannot hold the lock wait and the store budgets', () => {
    const attempt = () =>
      idempotency({
        store: postgresStore(fromPrisma(prisma, { timeout: 12_000 })),
        lockTimeoutMs: 3000,
        storeTimeoutMs: 5000,
      });
    expect(attempt).toThrow(/13000 ms/);
    expect(isRetrysafeError(catchError(attempt), 'misuse')).toBe(true);
  });

  it('is accepted at its default with the default budgets', () => {
    expect(() => idempotency({ store: postgresStore(fromPrisma(prisma)) })).not.toThrow();
  });

  it('ends a handler that runs past it: the record’s INSERT meets Prisma’s P2028, the answer is 503, and nothing is stored', async () => {
    const server = await createMigratedDatabase();
    const timed = new PrismaClient({ adapter: new PrismaPg({ connectionString: server.url, max: 2 }) });
    try {
      // Budgets wide enough that the claim meets none of them on a busy machine: only Prisma's time-out ends the run.
      const database = fromPrisma(timed, { timeout: 3000 });
      await migrate(database);
      await database.query(ORDERS_TABLE);
      const storeErrors: unknown[] = [];
      const observers = [(event: RetrysafeEvent) => event.type === 'store-error' && storeErrors.push(event.error)];
      const create = atomic(
        idempotency({ store: postgresStore(database), lockTimeoutMs: 100, storeTimeoutMs: 1000, observers }),
        {
          operation: 'orders.create@1',
          tenant: () => 'tenant-a',
          async handler({ tx }) {
            await tx.order.create({ data: { tenant: 'tenant-a', sku: 'SKU-1', qty: 1 } });
            await new Promise((resolve) => setTimeout(resolve, 4000));
            return { status: 201, body: {} };
          },
        },
      );
      const request = new Request('http://orders.test/orders', {
        method: 'POST',
        headers: { 'idempotency-key': 'k', 'content-type': 'application/json' },
        body: '{}',
      });
      const response = await create(request, undefined);
      expect(response.status).toBe(503);
      expect(await response.json()).toMatchObject({ type: 'https://retrysafe.dev/problems/store-unavailable' });
      expect(storeErrors).toHaveLength(1);
      expect(isRetrysafeError(storeErrors[0], 'store-unavailable')).toBe(true);
      expect((storeErrors[0] as { cause?: { code?: unknown } }).cause?.code).toBe('P2028');
      const { rows } = await database.query<{ orders: number; records: number }>(
        'SELECT (SELECT count(*)::int FROM orders) AS orders, (SELECT count(*)::int FROM retrysafe_operations) AS records',
      );
      expect(rows[0]).toEqual({ orders: 0, records: 0 });
    } finally {
      await timed.$disconnect();
      await server.drop();
    }
  });
});

function catchError(run: () => unknown): unknown {
  try {
    run();
  } catch (error) {
    return error;
  }
  return undefined;
}

describe("each data layer's handlers get the library's own transaction type", () => {
  it('postgres.js: TransactionSql; Kysely: Transaction<DB>; Drizzle: its PgTransaction; Prisma: TransactionClient', () => {
    const sql = postgres({ max: 1 });
    expectTypeOf(fromPostgresJs(sql)).toEqualTypeOf<SqlDatabase<postgres.TransactionSql>>();
    const kysely = new Kysely<Schema>({ dialect: new PostgresDialect({ pool: new pg.Pool() }) });
    expectTypeOf(fromKysely(kysely)).toEqualTypeOf<SqlDatabase<Transaction<Schema>>>();
    const drizzle = drizzleNodePg({ client: new pg.Pool() });
    expectTypeOf(fromDrizzle(drizzle)).toEqualTypeOf<
      SqlDatabase<Parameters<Parameters<typeof drizzle.transaction>[0]>[0]>
    >();
    const prisma = new PrismaClient({
      adapter: new PrismaPg({ connectionString: 'postgres://unused@127.0.0.1:1/unused' }),
    });
    expectTypeOf(fromPrisma(prisma)).toEqualTypeOf<SqlDatabase<Prisma.TransactionClient>>();
  });
});
