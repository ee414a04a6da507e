import express from 'express';
import Fastify from 'fastify';
import Koa from 'koa';
import pg from 'pg';
import { describe, expectTypeOf, it } from 'vitest';
import {
  type ActionResult,
  type ActivityBucket,
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
import { type ActivityCount, type ActivityStore, activityStore, fromPg, postgresStore } from 'retrysafe/postgres';
import { ActivityRecorder } from 'retrysafe/observe';

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
    // Stored bodies for every operation, or per operation by its identity.
    consoleFetch({ database, authorize: () => access, showBodies: true });
    consoleFetch({
      database,
      authorize: () => access,
      showBodies: ({ operation }) => operation !== 'payments.create@1',
    });
    // @ts-expect-error: the function says yes or no, nothing else.
    consoleFetch({ database, authorize: () => access, showBodies: () => 'yes' });
    // The host names it answers for, how long a session lasts, and the clock it ages by.
    consoleNode({
      database,
      authorize: () => access,
      allowedHosts: ['ops.example.com', 'localhost:4010'],
      sessionSeconds: 3600,
      now: () => Date.now(),
    });
    // @ts-expect-error: host names are a list, even of one.
    consoleFetch({ database, authorize: () => access, allowedHosts: 'ops.example.com' });
    // @ts-expect-error: a number of seconds.
    consoleKoa({ database, authorize: () => access, sessionSeconds: '8h' });
    // @ts-expect-error: milliseconds since 1970, as Date.now gives them, not a Date.
    consoleFetch({ database, authorize: () => access, now: () => new Date() });
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
    expectTypeOf(await operators.activity(24)).toEqualTypeOf<readonly ActivityBucket[]>();
    expectTypeOf<ActivityBucket['counts']>().toEqualTypeOf<
      Readonly<Record<'new' | 'replay' | 'mismatch' | 'conflict' | 'unknown' | 'failed', number>>
    >();
    const config = idempotency({ store: postgresStore(database), activity: { flushIntervalMs: 5000 } });
    expectTypeOf(config.close()).toEqualTypeOf<Promise<void>>();
    idempotency({ store: postgresStore(database), activity: false });
    // @ts-expect-error: on by default; only false turns it off.
    idempotency({ store: postgresStore(database), activity: true });
    expectTypeOf(
      runOperatorAction({ config, operators }, action, { actor: 'ops', reason: 'why' }),
    ).resolves.toEqualTypeOf<ActionResult>();
  });

  it('counts activity into any ActivityStore, as an observer', async () => {
    const store: ActivityStore = activityStore(database);
    expectTypeOf(store.activity(24)).resolves.toEqualTypeOf<readonly ActivityCount[]>();
    const recorder = new ActivityRecorder(store, { flushIntervalMs: 1000, onError: (error: unknown) => void error });
    idempotency({ store: postgresStore(database), activity: false, observers: [recorder.observer] });
    expectTypeOf(recorder.flush()).toEqualTypeOf<Promise<void>>();
    await recorder.close();
  });
});
