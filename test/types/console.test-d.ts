import express from 'express';
import Fastify from 'fastify';
import Koa from 'koa';
import pg from 'pg';
import { describe, expectTypeOf, it } from 'vitest';
import {
  type ActionResult,
  type ConsoleAccess,
  consoleFastify,
  consoleFetch,
  consoleKoa,
  consoleNode,
  type OperationView,
  type OperatorAction,
  operatorStore,
  runOperatorAction,
} from 'retrysafe/console';
import { idempotency } from 'retrysafe';
import { fromPg, postgresStore } from 'retrysafe/postgres';

describe('retrysafe/console', () => {
  const database = fromPg(new pg.Pool());
  const access: ConsoleAccess = { read: true, act: false };

  it("mounts in each framework behind the application's own authorize hook", () => {
    express().use(
      '/ops',
      consoleNode({ database, authorize: (req) => ({ read: req.headers.authorization !== undefined, act: false }) }),
    );
    void Fastify().register(consoleFastify({ database, authorize: () => access }), { prefix: '/ops' });
    new Koa().use(consoleKoa({ database, basePath: '/ops', authorize: async () => Promise.resolve(access) }));
    expectTypeOf(
      consoleFetch({ database, authorize: (request: Request) => ({ read: request.method === 'GET', act: false }) }),
    ).returns.resolves.toEqualTypeOf<Response>();
    // @ts-expect-error: without an authorize hook nobody decides who may read.
    consoleFetch({ database });
  });

  it('gives the same reads and actions as a typed API', async () => {
    const operators = operatorStore(database);
    const view = await operators.operation({ tenant: 't', operation: 'orders.create@1', key: 'k' });
    expectTypeOf(view).toEqualTypeOf<OperationView | undefined>();
    const action: OperatorAction = {
      action: 'purge',
      identity: { tenant: 't', operation: 'orders.create@1', key: 'k' },
      seen: { state: 'completed', fencingToken: 1 },
    };
    const config = idempotency({ store: postgresStore(database) });
    expectTypeOf(
      runOperatorAction({ config, operators }, action, { actor: 'ops', reason: 'why' }),
    ).resolves.toEqualTypeOf<ActionResult>();
  });
});
