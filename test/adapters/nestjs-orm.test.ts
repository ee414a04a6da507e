import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { PrismaPg } from '@prisma/adapter-pg';
import { Body, ConflictException, Controller, Module, Post } from '@nestjs/common';
import pg from 'pg';
import 'reflect-metadata';
import { afterAll, beforeAll, describe, expect, expectTypeOf, it } from 'vitest';
import { Idempotent, RetrysafeModule, Tx } from '../../src/adapters/nestjs/index.js';
import { idempotency, type SqlDatabase } from '../../src/index.js';
import { fromPrisma } from '../../src/postgres/clients/from-prisma.js';
import { fromPg, migrate, postgresStore } from '../../src/postgres/index.js';
import { ORDERS_TABLE } from '../support/apps.js';
import { createMigratedDatabase, type TestDatabase } from '../support/database.js';
import { send } from '../support/http.js';
import type { Listening } from '../support/listen.js';
import { httpStatusAnswer, nestPlatforms, startNest } from '../support/nest-apps.js';
import { type Prisma, PrismaClient } from '../support/prisma/generated/client.js';

const DUPLICATES = 10;

/**
 * Nest with an ORM: the atomic route gets Prisma's interactive transaction
 * client through `@Tx()` and writes through Prisma's model API, so the order
 * commits with the stored answer or not at all. The rows are counted in SQL,
 * on a connection of their own.
 */
describe.each(nestPlatforms)('NestJS on $name, with Prisma', (platform) => {
  let db: TestDatabase;
  let prisma: PrismaClient;
  let pool: pg.Pool;
  let app: Listening;
  const errors: unknown[] = [];

  beforeAll(async () => {
    db = await createMigratedDatabase();
    pool = new pg.Pool({ connectionString: db.url, max: 2 });
    pool.on('error', () => {});
    await migrate(fromPg(pool));
    await pool.query(ORDERS_TABLE);
    // Room for every duplicate's transaction at once; a duplicate waits for a connection rather than failing.
    prisma = new PrismaClient({ adapter: new PrismaPg({ connectionString: db.url, max: DUPLICATES + 2 }) });
    const database = fromPrisma(prisma, { maxWait: 10_000 });
    expectTypeOf(database).toEqualTypeOf<SqlDatabase<Prisma.TransactionClient>>();

    @Controller('orders')
    class OrdersController {
      @Post()
      @Idempotent({ operation: 'orders.create@1', mode: 'atomic' })
      async create(
        @Tx() tx: Prisma.TransactionClient,
        @Body() body: { sku: string; qty: number; delayMs?: number },
      ): Promise<{ id: number }> {
        const order = await tx.order.create({ data: { tenant: 'tenant-a', sku: body.sku, qty: body.qty } });
        if (body.delayMs !== undefined) await sleep(body.delayMs);
        if (body.sku.startsWith('TAKEN')) throw new ConflictException('That order exists already.');
        return { id: order.id };
      }
    }

    @Module({
      imports: [
        RetrysafeModule.forRoot<Prisma.TransactionClient>({
          idempotency: idempotency({ store: postgresStore(database) }),
          tenant: () => 'tenant-a',
        }),
      ],
      controllers: [OrdersController],
    })
    class AppModule {}

    app = await startNest(AppModule, platform, errors, httpStatusAnswer);
  });
  afterAll(async () => {
    await app.close();
    await prisma.$disconnect();
    await pool.end();
    await db.drop();
  });

  const post = (key: string, body: unknown) =>
    send('POST', `${app.url}/orders`, { headers: { 'idempotency-key': key }, body });
  const orders = async (sku: string) =>
    (await pool.query<{ n: number }>('SELECT count(*)::int AS n FROM orders WHERE sku = $1', [sku])).rows[0]?.n;
  const records = async (key: string) =>
    (await pool.query('SELECT 1 FROM retrysafe_operations WHERE key = $1', [key])).rowCount;

  it('writes through Prisma’s transaction client, answers 201, replays it byte for byte without a second row, and refuses another body', async () => {
    const key = randomUUID();
    const sku = `A-${key}`;
    const first = await post(key, { sku, qty: 2 });
    expect(first.status).toBe(201);
    expect(first.headers['idempotent-replayed']).toBeUndefined();
    expect(await orders(sku)).toBe(1);
    const { rows } = await pool.query<{ id: number }>('SELECT id FROM orders WHERE sku = $1', [sku]);
    expect(first.json).toEqual({ id: rows[0]?.id });

    const again = await post(key, { sku, qty: 2 });
    expect(again.status).toBe(201);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.bodyBytes.toString('latin1')).toBe(first.bodyBytes.toString('latin1'));
    expect(await orders(sku)).toBe(1);

    expect((await post(key, { sku, qty: 3 })).status).toBe(422);
    expect(await orders(sku)).toBe(1);
  });

  it('rolls back the row and the operation record when the method throws; the retry runs again and succeeds', async () => {
    const key = randomUUID();
    const sku = `TAKEN-${key}`;
    errors.length = 0;
    const refused = await post(key, { sku, qty: 1 });
    expect(refused.status).toBe(409);
    expect(refused.headers['idempotent-replayed']).toBeUndefined();
    expect(errors).toHaveLength(1);
    expect(errors[0]).toBeInstanceOf(ConflictException);
    expect(await orders(sku)).toBe(0);
    expect(await records(key)).toBe(0);

    // Nothing was stored for the key: the same key with a body that now succeeds runs the method and commits.
    const retried = await post(key, { sku: `A-${key}`, qty: 1 });
    expect(retried.status).toBe(201);
    expect(retried.headers['idempotent-replayed']).toBeUndefined();
    expect(await orders(`A-${key}`)).toBe(1);
    expect(await records(key)).toBe(1);
  });

  it(`${DUPLICATES} concurrent duplicates make exactly one row; each answer is the original, its replay, or 409`, async () => {
    const key = randomUUID();
    const sku = `SLOW-${key}`;
    const answers = await Promise.all(
      Array.from({ length: DUPLICATES }, () => post(key, { sku, qty: 1, delayMs: 300 })),
    );
    const originals = answers.filter(
      (answer) => answer.status === 201 && answer.headers['idempotent-replayed'] === undefined,
    );
    expect(originals).toHaveLength(1);
    const original = originals[0]?.bodyBytes.toString('latin1');
    for (const answer of answers) {
      if (answer.status === 409) expect(answer.headers['content-type']).toMatch(/^application\/problem\+json/);
      else
        expect({ status: answer.status, body: answer.bodyBytes.toString('latin1') }).toEqual({
          status: 201,
          body: original,
        });
    }
    expect(await orders(sku)).toBe(1);
    expect(await records(key)).toBe(1);
  });
});
