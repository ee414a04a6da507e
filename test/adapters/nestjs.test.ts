import { randomUUID } from 'node:crypto';
import { Body, ConflictException, Controller, HttpCode, Module, Post, UseInterceptors } from '@nestjs/common';
import pg from 'pg';
import 'reflect-metadata';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IdempotencyInterceptor, Idempotent, RetrysafeModule, Tx } from '../../src/adapters/nestjs/index.js';
import { idempotency, isRetrysafeError } from '../../src/index.js';
import { fromPg, migrate, postgresStore } from '../../src/postgres/index.js';
import { ORDERS_TABLE } from '../support/apps.js';
import { createMigratedDatabase, type TestDatabase } from '../support/database.js';
import { send } from '../support/http.js';
import type { Listening } from '../support/listen.js';
import { httpStatusAnswer, nestPlatforms, startNest } from '../support/nest-apps.js';

/**
 * Nest written as its users write it: the transaction of node-postgres's own
 * `PoolClient` through `@Tx()`, the body through `@Body()`, the status from
 * `@HttpCode`, the options from `forRootAsync`. The contract suite runs
 * through Nest in the other files of this folder.
 */
describe.each(nestPlatforms)('NestJS on $name, with node-postgres', (platform) => {
  let db: TestDatabase;
  let pool: pg.Pool;
  let app: Listening;
  const errors: unknown[] = [];

  beforeAll(async () => {
    db = await createMigratedDatabase();
    pool = new pg.Pool({ connectionString: db.url });
    pool.on('error', () => {});
    const database = fromPg(pool);
    await migrate(database);
    await pool.query(ORDERS_TABLE);
    const TENANT = Symbol('tenant');

    @Controller('orders')
    class OrdersController {
      @Post()
      @Idempotent({ operation: 'orders.create@1', mode: 'atomic' })
      async create(@Tx() tx: pg.PoolClient, @Body() body: { sku: string; qty: number }): Promise<{ id: number }> {
        const { rows } = await tx.query<{ id: number }>(
          "INSERT INTO orders (tenant, sku, qty) VALUES ('tenant-a', $1, $2) RETURNING id",
          [body.sku, body.qty],
        );
        if (body.sku === 'TAKEN') throw new ConflictException('That order exists already.');
        return { id: rows[0]?.id ?? 0 };
      }

      @Post('web')
      @HttpCode(202)
      @Idempotent({ operation: 'orders.web@1', mode: 'atomic' })
      async web(@Tx() tx: pg.PoolClient): Promise<Response> {
        const { rows } = await tx.query<{ id: number }>(
          "INSERT INTO orders (tenant, sku, qty) VALUES ('tenant-a', 'WEB', 1) RETURNING id",
        );
        return new Response(`order ${rows[0]?.id}`, {
          status: 201,
          headers: { 'content-type': 'text/plain', location: `/orders/${rows[0]?.id}` },
        });
      }

      @Post('plain')
      plain(@Tx() tx: pg.PoolClient): string {
        return typeof tx;
      }

      @Post('bare')
      @UseInterceptors(IdempotencyInterceptor)
      bare(): string {
        return 'ran';
      }
    }

    @Module({ providers: [{ provide: TENANT, useValue: 'tenant-a' }], exports: [TENANT] })
    class TenantModule {}

    @Module({
      imports: [
        RetrysafeModule.forRootAsync({
          imports: [TenantModule],
          inject: [TENANT],
          useFactory: (tenant: string) => ({
            idempotency: idempotency({ store: postgresStore(database) }),
            tenant: () => tenant,
          }),
        }),
      ],
      controllers: [OrdersController],
    })
    class AppModule {}

    app = await startNest(AppModule, platform, errors, httpStatusAnswer);
  });
  afterAll(async () => {
    await app.close();
    await pool.end();
    await db.drop();
  });

  const post = (path: string, key: string, body?: unknown) =>
    send('POST', `${app.url}${path}`, { headers: { 'idempotency-key': key }, body });
  const orders = async (sku: string) =>
    (await pool.query<{ n: number }>('SELECT count(*)::int AS n FROM orders WHERE sku = $1', [sku])).rows[0]?.n;

  it('writes through the PoolClient of @Tx(), answers Nest’s 201 with the JSON body, and replays it without a second row', async () => {
    const key = randomUUID();
    const sku = `A-${key}`;
    const first = await post('/orders', key, { sku, qty: 2 });
    expect(first.status).toBe(201);
    expect(first.headers['content-type']).toMatch(/^application\/json/);
    const again = await post('/orders', key, { sku, qty: 2 });
    expect(again.status).toBe(201);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.bodyBytes.toString('latin1')).toBe(first.bodyBytes.toString('latin1'));
    expect(await orders(sku)).toBe(1);
    expect((await post('/orders', key, { sku, qty: 3 })).status).toBe(422);
  });

  it('rolls the insert back when the method throws an HttpException; Nest answers it and the retry runs again', async () => {
    const key = randomUUID();
    const refused = await post('/orders', key, { sku: 'TAKEN', qty: 1 });
    expect(refused.status).toBe(409);
    expect(refused.headers['idempotent-replayed']).toBeUndefined();
    expect(await orders('TAKEN')).toBe(0);
    expect((await pool.query('SELECT 1 FROM retrysafe_operations WHERE key = $1', [key])).rowCount).toBe(0);
    expect((await post('/orders', key, { sku: 'TAKEN', qty: 1 })).status).toBe(409);
  });

  it('takes a web Response from the method as it is: its status over @HttpCode, its headers and bytes', async () => {
    const key = randomUUID();
    const first = await post('/orders/web', key);
    expect(first.status).toBe(201);
    expect(first.headers.location).toMatch(/^\/orders\/\d+$/);
    expect(first.bodyBytes.toString()).toMatch(/^order \d+$/);
    const again = await post('/orders/web', key);
    expect(again.status).toBe(201);
    expect(again.headers.location).toBe(first.headers.location);
    expect(again.bodyBytes.toString()).toBe(first.bodyBytes.toString());
    expect(await orders('WEB')).toBe(1);
  });

  it('refuses @Tx() on a route that is not atomic with a misuse error', async () => {
    errors.length = 0;
    expect((await post('/orders/plain', randomUUID())).status).toBe(500);
    expect(errors).toHaveLength(1);
    expect(isRetrysafeError(errors[0], 'misuse')).toBe(true);
  });

  it('refuses the interceptor bound without @Idempotent with a misuse error, and does not run the method', async () => {
    errors.length = 0;
    const res = await post('/orders/bare', randomUUID());
    expect(res.status).toBe(500);
    expect(res.bodyBytes.toString()).not.toContain('ran');
    expect(isRetrysafeError(errors[0], 'misuse')).toBe(true);
  });
});

describe('@Idempotent', () => {
  it('refuses an operation name without a version when the route is defined', () => {
    expect(() => Idempotent({ operation: 'orders.create', mode: 'atomic' })).toThrow(/must be a name with a version/);
  });
});
