import type { PGlite, Transaction as PGliteTransaction } from '@electric-sql/pglite';
import type { Request as ExpressRequest, RequestHandler } from 'express';
import type { NodePgDatabase } from 'drizzle-orm/node-postgres';
import type { FastifyRequest } from 'fastify';
import type { Knex } from 'knex';
import type { Kysely, Transaction } from 'kysely';
import type pg from 'pg';
import type { Sql, TransactionSql } from 'postgres';
import type { DataSource, EntityManager } from 'typeorm';
import { describe, expectTypeOf, it } from 'vitest';
import {
  type AtomicRoute,
  type AtomicTransaction,
  type CodedError,
  type Completion,
  type IdempotentOutcome,
  type Observer,
  type ProblemCode,
  type RetrysafeErrorCode,
  type RetrysafeEvent,
  type RetrysafeEventOf,
  type Settlement,
  type SqlClient,
  type SqlDatabase,
  type TransparentFailure,
  type TransparentRoute,
  idempotency,
  type OpenApiObject,
  openApiDocument,
  openApiPathItem,
  type PublishedSpecification,
  type RouteSpecification,
  specificationPage,
  idempotent,
  invalid,
  isRetrysafeError,
  RetrysafeError,
  valid,
} from 'retrysafe';
import { type CheckError, type CheckErrorCode, type CodedError as CheckCodedError } from 'retrysafe/check';
import {
  atomicRunner,
  beginTransparent,
  type IncomingRequest,
  type Reply,
  type RouteRunner,
  specificationReply,
  type TransparentAttempt,
  type TransparentStart,
} from 'retrysafe/adapter';
import {
  type CodedError as ClientCodedError,
  type IdempotentFetchError,
  type IdempotentFetchErrorCode,
  idempotentFetch,
  type IdempotentResult,
  isIdempotentFetchError,
  type RetryEvent,
} from 'retrysafe/client';
import { drizzleRunner, fromDrizzle } from 'retrysafe/drizzle';
import type { FastifyPluginCallback } from 'fastify';
import type { Middleware } from 'koa';
import {
  atomic as expressAtomic,
  leased as expressLeased,
  specification as expressSpecification,
  transparent as expressTransparent,
} from 'retrysafe/express';
import {
  atomic as fastifyAtomic,
  specification as fastifySpecification,
  transparent as fastifyTransparent,
} from 'retrysafe/fastify';
import { specification as fetchSpecification, transparent as fetchTransparent } from 'retrysafe/fetch';
import { specification as koaSpecification, transparent as koaTransparent } from 'retrysafe/koa';
import type { IdempotentRouteOptions as NestIdempotentOptions } from 'retrysafe/nestjs';
import { consume, type InboxResult } from 'retrysafe/inbox';
import { fromKnex, knexRunner } from 'retrysafe/knex';
import { fromKysely, kyselyRunner } from 'retrysafe/kysely';
import { enqueue } from 'retrysafe/outbox';
import { fromPg, fromPGlite, postgresStore } from 'retrysafe/postgres';
import { fromPostgresJs, postgresJsRunner } from 'retrysafe/postgres-js';
import { fromPrisma, prismaRunner } from 'retrysafe/prisma';
import { fromTypeORM, typeormRunner } from 'retrysafe/typeorm';
import { receiveWebhook, type VerificationFailure, verifyWebhook, type WebhookReceipt } from 'retrysafe/webhooks';
import type { Prisma, PrismaClient } from '../support/prisma/generated/client.js';

// Checked by `vitest --typecheck` (part of `npm test`); nothing here runs. Every import is by package name, as a user writes it.

interface Orders {
  orders: { id: number; sku: string };
}

declare const pool: pg.Pool;
declare const lite: PGlite;
declare const sql: Sql;
declare const kysely: Kysely<Orders>;
declare const drizzle: NodePgDatabase;
declare const prisma: PrismaClient;
declare const dataSource: DataSource;
declare const knex: Knex;

type DrizzleTx = Parameters<Parameters<NodePgDatabase['transaction']>[0]>[0];
type PrismaTx = Prisma.TransactionClient;

describe('data layers hand routes their own transaction', () => {
  it('types the transaction of each driver and data layer', () => {
    expectTypeOf(fromPg(pool)).toEqualTypeOf<SqlDatabase<pg.PoolClient>>();
    expectTypeOf(fromPGlite(lite)).toEqualTypeOf<SqlDatabase<PGliteTransaction>>();
    expectTypeOf(fromPostgresJs(sql)).toEqualTypeOf<SqlDatabase<TransactionSql>>();
    expectTypeOf(fromKysely(kysely)).toEqualTypeOf<SqlDatabase<Transaction<Orders>>>();
    expectTypeOf(fromDrizzle(drizzle)).toEqualTypeOf<SqlDatabase<DrizzleTx>>();
    expectTypeOf(fromPrisma(prisma)).toEqualTypeOf<SqlDatabase<PrismaTx>>();
    expectTypeOf(fromTypeORM(dataSource)).toEqualTypeOf<SqlDatabase<EntityManager>>();
    expectTypeOf(fromKnex(knex)).toEqualTypeOf<SqlDatabase<Knex.Transaction>>();
  });

  it('turns each transaction into the statement runner that enqueue takes', () => {
    expectTypeOf<Transaction<Orders>>().toExtend<Parameters<typeof kyselyRunner>[0]>();
    expectTypeOf(kyselyRunner).returns.toEqualTypeOf<SqlClient>();
    expectTypeOf(postgresJsRunner).returns.toEqualTypeOf<SqlClient>();
    expectTypeOf(drizzleRunner).returns.toEqualTypeOf<SqlClient>();
    expectTypeOf(prismaRunner).returns.toEqualTypeOf<SqlClient>();
    expectTypeOf<EntityManager>().toExtend<Parameters<typeof typeormRunner>[0]>();
    expectTypeOf(typeormRunner).returns.toEqualTypeOf<SqlClient>();
    expectTypeOf<Knex.Transaction>().toExtend<Parameters<typeof knexRunner>[0]>();
    expectTypeOf(knexRunner).returns.toEqualTypeOf<SqlClient>();
  });
});

describe('routes infer their input and transaction in each mode', () => {
  const kyselyConfig = idempotency({ store: postgresStore(fromKysely(kysely)) });

  it('atomic: the handler gets the validated input and the data layer transaction', () => {
    expressAtomic(kyselyConfig, {
      operation: 'orders.create@1',
      tenant: (req) => req.get('x-tenant'),
      input: (_req, body) =>
        typeof body === 'object' && body !== null && 'sku' in body && typeof body.sku === 'string'
          ? valid({ sku: body.sku })
          : invalid({ status: 400 }),
      async handler({ input, tx, tenant, request }) {
        expectTypeOf(input).toEqualTypeOf<{ sku: string }>();
        expectTypeOf(tx).toEqualTypeOf<Transaction<Orders>>();
        expectTypeOf(tenant).toEqualTypeOf<string>();
        expectTypeOf(request).toEqualTypeOf<ExpressRequest>();
        const row = await tx
          .insertInto('orders')
          .values({ id: 1, sku: input.sku })
          .returning('id')
          .executeTakeFirstOrThrow();
        return { status: 201, body: row };
      },
    });
    expectTypeOf(expressAtomic<unknown, Transaction<Orders>>).returns.toEqualTypeOf<RequestHandler>();
  });

  it('a principal gets the framework request and the tenant, and may answer later', () => {
    expressAtomic(kyselyConfig, {
      operation: 'orders.create@1',
      tenant: (req) => req.get('x-tenant'),
      principal(req, tenant) {
        expectTypeOf(req).toEqualTypeOf<ExpressRequest>();
        expectTypeOf(tenant).toEqualTypeOf<string>();
        return Promise.resolve(req.get('x-user'));
      },
      handler: () => Promise.resolve({ status: 204 }),
    });
    expressAtomic(kyselyConfig, {
      operation: 'orders.create@1',
      tenant: () => 'tenant-a',
      // @ts-expect-error a principal is a string: a number would be stored under another digest than its text.
      principal: () => 7,
      handler: () => Promise.resolve({ status: 204 }),
    });
  });

  it('atomic through TypeORM and Knex: the handler writes through its own transaction', () => {
    fastifyAtomic(idempotency({ store: postgresStore(fromTypeORM(dataSource)) }), {
      operation: 'orders.create@1',
      tenant: () => 'tenant-a',
      async handler({ tx }) {
        expectTypeOf(tx).toEqualTypeOf<EntityManager>();
        const rows: unknown = await tx.query('SELECT 1');
        return { status: 201, body: rows };
      },
    });
    expressAtomic(idempotency({ store: postgresStore(fromKnex(knex)) }), {
      operation: 'orders.create@1',
      tenant: () => 'tenant-a',
      async handler({ tx }) {
        expectTypeOf(tx).toEqualTypeOf<Knex.Transaction>();
        const [order] = await tx<{ id: number; sku: string }>('orders').insert({ sku: 'SKU-1' }).returning('id');
        return { status: 201, body: order };
      },
    });
  });

  it('atomic through Drizzle, Prisma and PGlite', () => {
    fastifyAtomic(idempotency({ store: postgresStore(fromDrizzle(drizzle)) }), {
      operation: 'orders.create@1',
      tenant: (request) => String(request.headers['x-tenant']),
      handler: ({ tx, request }) => {
        expectTypeOf(tx).toEqualTypeOf<DrizzleTx>();
        expectTypeOf(request).toEqualTypeOf<FastifyRequest>();
        return Promise.resolve({ status: 204 });
      },
    });
    const prismaRoute: AtomicRoute<unknown, unknown, PrismaTx> = {
      operation: 'orders.create@1',
      tenant: () => 'tenant-a',
      handler: ({ tx }) => {
        expectTypeOf(tx).toHaveProperty('$executeRaw');
        return Promise.resolve({ status: 204 });
      },
    };
    expressAtomic(idempotency({ store: postgresStore(fromPrisma(prisma)) }), prismaRoute);
    expressAtomic(idempotency({ store: postgresStore(fromPGlite(lite)) }), {
      operation: 'orders.create@1',
      tenant: () => 'tenant-a',
      handler: ({ tx }) => {
        expectTypeOf(tx).toEqualTypeOf<PGliteTransaction>();
        return Promise.resolve({ status: 204 });
      },
    });
  });

  it('leased: steps are typed by their call, the input by the route', () => {
    expressLeased(idempotency({ store: postgresStore(fromPg(pool)) }), {
      operation: 'payments.create@1',
      tenant: () => 'tenant-a',
      input: (_req, body) => valid(body as { amount: number }),
      async handler({ input, step }) {
        expectTypeOf(input).toEqualTypeOf<{ amount: number }>();
        const charge = await step('charge', (call) =>
          Promise.resolve({ id: call.idempotencyKey, amount: input.amount }),
        );
        expectTypeOf(charge).toEqualTypeOf<{ id: string; amount: number }>();
        return { status: 201, body: charge };
      },
    });
  });

  it('transparent: the route has no handler of its own and no transaction', () => {
    const handler: RequestHandler = (_req, res) => void res.status(201).json({});
    expectTypeOf(
      expressTransparent(
        idempotency({ store: postgresStore(fromPg(pool)) }),
        { operation: 'orders.create@1', tenant: () => 'tenant-a' },
        handler,
      ),
    ).toEqualTypeOf<RequestHandler>();
  });

  it('transparent: onFailure is store or unknown, on every adapter, and on no other mode', () => {
    const config = idempotency({ store: postgresStore(fromPg(pool)) });
    const handler: RequestHandler = (_req, res) => void res.status(201).json({});
    expectTypeOf<TransparentFailure>().toEqualTypeOf<'store' | 'unknown'>();
    expectTypeOf<TransparentRoute<ExpressRequest, unknown>['onFailure']>().toEqualTypeOf<
      TransparentFailure | undefined
    >();
    expressTransparent(
      config,
      { operation: 'orders.create@1', tenant: () => 'tenant-a', onFailure: 'unknown' },
      handler,
    );
    fastifyTransparent(config, { operation: 'orders.create@1', tenant: () => 'tenant-a', onFailure: 'store' });
    koaTransparent(config, { operation: 'orders.create@1', tenant: () => 'tenant-a', onFailure: 'unknown' });
    fetchTransparent(
      config,
      { operation: 'orders.create@1', tenant: () => 'tenant-a', onFailure: 'store' },
      () => new Response(),
    );
    expressTransparent(
      config,
      // @ts-expect-error: a failure is stored or kept unknown, never dropped
      { operation: 'orders.create@1', tenant: () => 'tenant-a', onFailure: 'delete' },
      handler,
    );
    expressAtomic(config, {
      operation: 'orders.create@1',
      tenant: () => 'tenant-a',
      // @ts-expect-error: an atomic route rolls its failures back: it has no onFailure
      onFailure: 'store',
      handler: () => Promise.resolve({ status: 201 }),
    });
    expectTypeOf<{
      operation: 'orders.create@1';
      mode: 'transparent';
      onFailure: 'unknown';
    }>().toExtend<NestIdempotentOptions>();
    const nestAtomic: NestIdempotentOptions = {
      operation: 'orders.create@1',
      mode: 'atomic',
      // @ts-expect-error: nor has a Nest route that is not transparent
      onFailure: 'store',
    };
    expectTypeOf(nestAtomic).toEqualTypeOf<NestIdempotentOptions>();
  });
});

describe('observers and errors', () => {
  it('narrows an event by its type', () => {
    const observer: Observer = (event) => {
      expectTypeOf(event).toEqualTypeOf<RetrysafeEvent>();
      if (event.type === 'finished') {
        expectTypeOf(event).toEqualTypeOf<RetrysafeEventOf<'finished'>>();
        expectTypeOf(event.status).toEqualTypeOf<number>();
        expectTypeOf(event.mode).toEqualTypeOf<'atomic' | 'leased' | 'transparent'>();
      }
      if (event.type === 'problem') expectTypeOf(event.code).toEqualTypeOf<ProblemCode>();
      if (event.type === 'lock-wait') expectTypeOf(event.ms).toEqualTypeOf<number>();
      // @ts-expect-error a replay carries no status
      void (event.type === 'replayed' && event.status);
    };
    idempotency({ store: postgresStore(fromPg(pool)), observers: [observer] });
  });

  it('names error and problem codes as unions of literals', () => {
    expectTypeOf<'misuse'>().toExtend<RetrysafeErrorCode>();
    expectTypeOf<'store-unavailable'>().toExtend<RetrysafeErrorCode>();
    expectTypeOf<'fingerprint-mismatch'>().toExtend<ProblemCode>();
    expectTypeOf<'key-of-another-principal'>().toExtend<ProblemCode>();
    expectTypeOf<'no-such-code'>().not.toExtend<ProblemCode>();
    expectTypeOf<string>().not.toExtend<RetrysafeErrorCode>();
    expectTypeOf<IdempotentFetchErrorCode>().not.toEqualTypeOf<string>();
    const error: unknown = new Error('x');
    if (isRetrysafeError(error, 'misuse')) expectTypeOf(error.code).toEqualTypeOf<RetrysafeErrorCode>();
    if (isIdempotentFetchError(error)) expectTypeOf(error.code).toEqualTypeOf<IdempotentFetchErrorCode>();
  });

  it('gives the three public error classes one base, each keeping its own codes', () => {
    expectTypeOf<RetrysafeError>().toExtend<CodedError<RetrysafeErrorCode>>();
    expectTypeOf<IdempotentFetchError>().toExtend<ClientCodedError<IdempotentFetchErrorCode>>();
    expectTypeOf<CheckError>().toExtend<CheckCodedError<CheckErrorCode>>();
    expectTypeOf<RetrysafeError['code']>().toEqualTypeOf<RetrysafeErrorCode>();
    expectTypeOf<CheckError['code']>().toEqualTypeOf<CheckErrorCode>();
    // @ts-expect-error: a code of another class is not one of RetrysafeError's.
    new RetrysafeError('attempts-exhausted', 'x');
  });
});

describe('the client, messaging and jobs', () => {
  it('types the client options and result', () => {
    expectTypeOf(idempotentFetch).returns.resolves.toEqualTypeOf<IdempotentResult>();
    void idempotentFetch('https://api.example/orders', {
      method: 'POST',
      retry: { attempts: 3, onRetry: (event) => expectTypeOf(event).toEqualTypeOf<RetryEvent>() },
    });
  });

  it('enqueues in any data layer transaction through its runner', () => {
    expressAtomic(idempotency({ store: postgresStore(fromKysely(kysely)) }), {
      operation: 'orders.create@1',
      tenant: () => 'tenant-a',
      async handler({ tx }) {
        const id = await enqueue(kyselyRunner(tx), { topic: 'orders.created', payload: { id: 1 } });
        expectTypeOf(id).toEqualTypeOf<string>();
        return { status: 201 };
      },
    });
  });

  it('consumes a message once, in the data layer transaction', () => {
    expectTypeOf(consume(fromPostgresJs(sql), 'billing', 'msg-1', (tx) => Promise.resolve(tx))).resolves.toEqualTypeOf<
      InboxResult<TransactionSql>
    >();
  });

  it('verifies and receives webhooks', () => {
    const verification = verifyWebhook(
      { secrets: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw' },
      { 'webhook-id': 'msg_1' },
      '{}',
    );
    if (verification.ok) expectTypeOf(verification.id).toEqualTypeOf<string>();
    else expectTypeOf(verification.reason).toEqualTypeOf<VerificationFailure>();
    const receipt = receiveWebhook(
      fromPg(pool),
      { receiver: 'payments', secrets: 'whsec_x' },
      { headers: new Headers(), rawBody: '{}' },
    );
    expectTypeOf(receipt).resolves.toEqualTypeOf<WebhookReceipt>();
  });

  it('runs a job once under a key, outside HTTP', () => {
    const config = idempotency({ store: postgresStore(fromPg(pool)) });
    expectTypeOf(
      idempotent(config, (tx) => Promise.resolve(tx.escapeLiteral('x')), { operation: 'jobs.nightly@1', key: 'job-1' }),
    ).resolves.toEqualTypeOf<IdempotentOutcome<string>>();
  });
});

describe('the adapter building blocks', () => {
  it('runs a route from a request the adapter builds, and hands back the reply to send', () => {
    const config = idempotency({ store: postgresStore(fromPg(pool)) });
    const run = atomicRunner(config, {
      operation: 'orders.create@1',
      tenant: (req: { token: string }) => req.token,
      handler: () => Promise.resolve({ status: 204 }),
    });
    expectTypeOf(run).toEqualTypeOf<RouteRunner<{ token: string }>>();
    expectTypeOf(run).parameter(0).toEqualTypeOf<IncomingRequest<{ token: string }>>();
    expectTypeOf(run).returns.resolves.toEqualTypeOf<Reply>();
    expectTypeOf(beginTransparent<{ token: string }, unknown>).returns.resolves.toEqualTypeOf<TransparentStart>();
    // A claimed attempt ends once: finished with the route's answer, or failed when the route threw.
    expectTypeOf<TransparentAttempt['finish']>().parameters.toEqualTypeOf<[Reply]>();
    expectTypeOf<TransparentAttempt['fail']>().parameters.toEqualTypeOf<[]>();
  });
});

describe('the atomic store seam', () => {
  it('settles with the completion to store when it commits, and with none when it rolls back', () => {
    expectTypeOf<{ commit: true; value: number; completion: Completion }>().toExtend<Settlement<number>>();
    expectTypeOf<{ commit: false; value: number }>().toExtend<Settlement<number>>();
    // @ts-expect-error: a commit writes the record, so it carries the completion
    const committed: Settlement<number> = { commit: true, value: 1 };
    const rolledBack: Settlement<number> = { commit: false, value: 1 };
    expectTypeOf([committed, rolledBack]).not.toBeNever();
    // The completion travels in the settlement: the transaction hands the work only the claim and the handle.
    expectTypeOf<keyof AtomicTransaction<pg.PoolClient>>().toEqualTypeOf<'claim' | 'tx'>();
  });
});

describe('the published idempotency specification', () => {
  it("is served by each adapter in the framework's own shape, from any configuration", () => {
    const config = idempotency({ store: postgresStore(fromPg(pool)), specificationPath: '/idempotency' });
    expectTypeOf(config.specification).toExtend<PublishedSpecification>();
    expectTypeOf(config.specification.routes()).toEqualTypeOf<readonly RouteSpecification[]>();
    expectTypeOf(expressSpecification(config)).toEqualTypeOf<RequestHandler>();
    expectTypeOf(fastifySpecification(config)).toEqualTypeOf<FastifyPluginCallback>();
    expectTypeOf(koaSpecification(config)).toEqualTypeOf<Middleware>();
    expectTypeOf(fetchSpecification(config)).toEqualTypeOf<(request: Request) => Response>();
    expectTypeOf(specificationReply(config, 'GET', '/idempotency')).toEqualTypeOf<Reply | undefined>();
    // @ts-expect-error: the path is a string the Link header and the routes share
    idempotency({ store: postgresStore(fromPg(pool)), specificationPath: 1 });
  });

  it('is generated from plain route specifications', () => {
    const routes = config().specification.routes();
    expectTypeOf(openApiDocument(routes)).toEqualTypeOf<OpenApiObject>();
    expectTypeOf(openApiPathItem).parameter(0).toEqualTypeOf<RouteSpecification>();
    expectTypeOf(specificationPage(routes)).toEqualTypeOf<string>();
    expectTypeOf<RouteSpecification['retention']['perOperation']>().toEqualTypeOf<boolean>();
  });
});

function config() {
  return idempotency({ store: postgresStore(fromPg(pool)) });
}
