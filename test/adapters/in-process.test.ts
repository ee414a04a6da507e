import Router from '@koa/router';
import { bodyParser } from '@koa/bodyparser';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import { IncomingMessage, ServerResponse } from 'node:http';
import express, { type Express, type Request as ExpressRequest } from 'express';
import Fastify from 'fastify';
import Koa from 'koa';
import { inject, type InjectOptions } from 'light-my-request';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { atomic as expressAtomic, keepRawBody } from '../../src/adapters/express/index.js';
import { atomic as fastifyAtomic } from '../../src/adapters/fastify/index.js';
import { atomic as koaAtomic } from '../../src/adapters/koa/index.js';
import { defaultProblemBase, idempotency, type Idempotency } from '../../src/index.js';
import { postgresStore } from '../../src/postgres/index.js';
import type { SqlClient } from '../../src/store/sql-client.js';
import { type AppState, routes } from '../support/apps.js';
import { engines } from '../support/engines.js';
import { appModule } from '../support/nest-apps.js';
import { newKey, useEngine } from './harness.js';

/** An answer to a request sent in process, without a socket. */
interface Injected {
  readonly statusCode: number;
  readonly headers: Record<string, unknown>;
  readonly body: string;
}

interface InProcessApp {
  send(options: InjectOptions): Promise<Injected>;
  close(): Promise<void>;
}

/**
 * Every framework whose applications are tested by sending requests in process
 * (Fastify's `inject`, light-my-request around any Node handler): the request
 * object there is not Node's own, and has no `headersDistinct`.
 */
const inProcess: readonly {
  readonly name: string;
  start(config: Idempotency<SqlClient>, state: AppState): Promise<InProcessApp>;
}[] = [
  {
    name: 'fastify, app.inject',
    async start(config, state) {
      const app = Fastify();
      app.post(
        '/orders',
        fastifyAtomic(
          config,
          routes<{ headers: { authorization?: string } }>((req) => req.headers.authorization, state).orders,
        ),
      );
      await app.ready();
      return { send: (options) => app.inject(options), close: () => app.close() };
    },
  },
  {
    name: 'nest (fastify), inject',
    async start(config, state) {
      const app = await NestFactory.create<NestFastifyApplication>(appModule(config, state), new FastifyAdapter(), {
        logger: false,
        rawBody: true,
      });
      await app.init();
      await app.getHttpAdapter().getInstance().ready();
      return { send: (options) => app.getHttpAdapter().getInstance().inject(options), close: () => app.close() };
    },
  },
  {
    name: 'express, light-my-request',
    start(config, state) {
      const app = withOwnPrototypes(express());
      app.use(express.json({ verify: keepRawBody }));
      app.post(
        '/orders',
        expressAtomic(config, routes<ExpressRequest>((req) => req.get('authorization'), state).orders),
      );
      return Promise.resolve({ send: (options) => inject(app, options), close: () => Promise.resolve() });
    },
  },
  {
    name: 'koa, light-my-request',
    start(config, state) {
      const router = new Router();
      router.post(
        '/orders',
        koaAtomic(config, routes<Koa.Context>((ctx) => ctx.get('authorization') || undefined, state).orders),
      );
      const app = new Koa();
      app.use(bodyParser());
      app.use(router.routes());
      const callback = app.callback();
      return Promise.resolve({
        send: (options) => inject((req, res) => void callback(req, res), options),
        close: () => Promise.resolve(),
      });
    },
  },
];

/**
 * light-my-request re-parents the prototypes of an Express app's request and
 * response, which are Express's shared `express.request` and
 * `express.response`, onto its own classes: every Express app of the process
 * would then take its own socket's requests for in-process ones. Copies of
 * them, for this app alone, keep that change here.
 */
function withOwnPrototypes(app: Express): Express {
  const copy = (of: object, base: object): object =>
    Object.create(base, Object.getOwnPropertyDescriptors(of)) as object;
  Object.setPrototypeOf(app.request, copy(express.request, IncomingMessage.prototype));
  Object.setPrototypeOf(app.response, copy(express.response, ServerResponse.prototype));
  return app;
}

describe.each(engines)('requests sent in process on $name', (engine) => {
  const ref = useEngine(engine);

  describe.each(inProcess)('through $name', (framework) => {
    const state: AppState = { invocations: [], errors: [], beforeReply: undefined, hooks: [] };
    let app: InProcessApp | undefined;
    beforeAll(async () => {
      app = await framework.start(idempotency({ store: postgresStore(ref.engine.database) }), state);
    });
    afterAll(() => app?.close());
    beforeEach(() => {
      state.invocations.length = 0;
    });
    const post = (headers: Record<string, string | string[]>): Promise<Injected> => {
      if (app === undefined) throw new Error('The app is not running yet.');
      return app.send({
        method: 'POST',
        url: '/orders',
        headers: { authorization: 'Bearer token-a', 'content-type': 'application/json', ...headers },
        payload: '{"sku":"IN-PROCESS","qty":3}',
      });
    };
    const problem = (answer: Injected): unknown => [
      answer.statusCode,
      (JSON.parse(answer.body) as { type?: unknown }).type,
    ];

    it('runs a new key once and replays it', async () => {
      const key = newKey();
      const first = await post({ 'idempotency-key': key });
      expect(first.statusCode).toBe(201);
      const retry = await post({ 'idempotency-key': key });
      expect(retry.statusCode).toBe(201);
      expect(retry.body).toBe(first.body);
      expect(retry.headers['idempotent-replayed']).toBe('true');
      expect(state.invocations).toHaveLength(1);
    });

    it('refuses a request without a key, and a key sent on two lines', async () => {
      const missing = await post({});
      expect(problem(missing)).toEqual([400, `${defaultProblemBase}idempotency-key-missing`]);
      const repeated = await post({ 'idempotency-key': ['a', 'b'] });
      expect(problem(repeated)).toEqual([400, `${defaultProblemBase}idempotency-key-invalid`]);
      expect(state.invocations).toHaveLength(0);
    });
  });
});
