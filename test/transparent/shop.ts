import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { createAdaptorServer } from '@hono/node-server';
import express, { type NextFunction, type Request, type Response } from 'express';
import Fastify, { type FastifyRequest } from 'fastify';
import { type Context, Hono } from 'hono';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import Router from '@koa/router';
import type { Context as KoaContext } from 'koa';
import { keepRawBody, transparent as expressTransparent } from '../../src/adapters/express/index.js';
import { transparent as fastifyTransparent } from '../../src/adapters/fastify/index.js';
import { type FetchRequest, transparent as fetchTransparent } from '../../src/adapters/fetch/index.js';
import { transparent as koaTransparent } from '../../src/adapters/koa/index.js';
import type { Idempotency } from '../../src/modes/idempotency.js';
import type { TransparentRoute } from '../../src/core/route.js';
import type { SqlClient } from '../../src/store/sql-client.js';
import { startKoa } from '../support/koa-app.js';
import { transparent as httpTransparent } from '../support/node-http-adapter.js';
import { serveHttp } from '../support/node-http-app.js';
import type { Gate } from '../support/gate.js';
import { listen } from '../support/listen.js';
import { nestShops } from './nest-shop.js';

/**
 * `POST /orders` (`orders.create@1`) written the usual way for each
 * framework, made transparent; a request without a key runs undeduplicated. It inserts an order into `ORDERS_TABLE` of
 * test/support/apps.ts through `effects` (its own connection, not the store's) and answers 201 with Location, a session
 * cookie, a debug header and the order as JSON. The `sku` steers it:
 * - `HANG`: inserts, then waits for `state.gate` before answering;
 * - `FAIL-<status>`: inserts, then answers that status (500, 503, 429) with `{ "error": "upstream failed" }`;
 * - `THROW`: inserts, then throws (Express `next(err)`). The error carries
 *   status 400, which the error handlers answer with: what retrysafe keeps of
 *   a thrown error does not depend on the status the framework then gives it;
 * - `STREAM`: inserts, then streams `STREAM_CHUNKS` as text/plain.
 */
export interface ShopState {
  /** The key of every run of the route, in order. */
  readonly runs: string[];
  /** What reached the framework's error handling. */
  readonly errors: unknown[];
  gate: Gate;
}

/** Eight chunks of 512 bytes: 4 KiB, over the 1 KiB the tests store. */
export const STREAM_CHUNKS: readonly string[] = Array.from({ length: 8 }, (_, i) => String(i).repeat(512));

export interface Framework {
  readonly name: string;
  start(
    config: Idempotency<unknown>,
    effects: Effects,
    state: ShopState,
    settings?: ShopSettings,
  ): Promise<{ readonly url: string; close(): Promise<void> }>;
}

/** Where the route writes its orders. */
export type Effects = Pick<SqlClient, 'query'>;

interface Order {
  readonly id: number;
  readonly sku: string;
}

type Outcome =
  | { readonly kind: 'created' | 'streamed'; readonly order: Order }
  | { readonly kind: 'failed'; readonly status: number }
  | { readonly kind: 'thrown'; readonly error: Error };

const TOKENS: Readonly<Record<string, string>> = {
  'token-a': 'tenant-a',
  'token-a2': 'tenant-a',
  'token-b': 'tenant-b',
};

/** The user each token names: `token-a2` is another user of `tenant-a`. */
const USERS: Readonly<Record<string, string>> = { 'token-a': 'user-1', 'token-a2': 'user-2', 'token-b': 'user-3' };

const tokenOf = (authorization: string | undefined | null): string =>
  /^Bearer (\S+)$/.exec(authorization ?? '')?.[1] ?? '';

export function tenantOf(authorization: string | undefined | null): string | undefined {
  return TOKENS[tokenOf(authorization)];
}

/** What the route does, whatever the framework; each framework then answers in its own way. */
export async function takeOrder(
  effects: Effects,
  state: ShopState,
  tenant: string,
  key: string,
  body: unknown,
): Promise<Outcome> {
  const { sku = '' } = (body ?? {}) as { sku?: string };
  state.runs.push(key);
  const { rows } = await effects.query<{ id: number }>(
    'INSERT INTO orders (tenant, sku, qty) VALUES ($1, $2, 1) RETURNING id',
    [tenant, sku],
  );
  const order = { id: rows[0]?.id ?? 0, sku };
  if (sku === 'THROW')
    return {
      kind: 'thrown',
      error: Object.assign(new Error('the route failed after its insert'), { status: 400, statusCode: 400 }),
    };
  const failed = /^FAIL-(\d{3})$/.exec(sku);
  if (failed !== null) return { kind: 'failed', status: Number(failed[1]) };
  if (sku === 'HANG') await state.gate.opened;
  return { kind: sku === 'STREAM' ? 'streamed' : 'created', order };
}

export function statusOf(error: unknown): number {
  const { status } = error as { status?: unknown };
  return typeof status === 'number' ? status : 500;
}

/** What a test may set on the shop's route. */
export type ShopSettings = Pick<TransparentRoute<unknown, unknown>, 'onFailure'>;

export function route<Req>(
  authorization: (request: Req) => string | undefined | null,
  settings: ShopSettings = {},
): TransparentRoute<Req, unknown> {
  return {
    ...settings,
    operation: 'orders.create@1',
    tenant: (request) => tenantOf(authorization(request)),
    principal: (request) => USERS[tokenOf(authorization(request))],
    keyRequired: false,
  };
}

/** The two lines of the `Link` header every created order carries, in this order. */
export const LINKS = ['</orders>; rel="collection"', '</docs/orders>; rel="describedby"'] as const;

export const expressShop: Framework = {
  name: 'express',
  start(config, effects, state, settings) {
    const app = express();
    app.post(
      '/orders',
      express.json({ verify: keepRawBody }),
      expressTransparent(
        config,
        route<Request>((req) => req.get('authorization'), settings),
        async (req: Request, res: Response, next: NextFunction) => {
          const outcome = await takeOrder(
            effects,
            state,
            tenantOf(req.get('authorization')) ?? '',
            req.get('idempotency-key') ?? '',
            req.body,
          );
          if (outcome.kind === 'thrown') return next(outcome.error);
          if (outcome.kind === 'failed') return void res.status(outcome.status).json({ error: 'upstream failed' });
          res
            .status(201)
            .location(`/orders/${outcome.order.id}`)
            .cookie('session', 'secret')
            .set('x-debug', '1')
            .set('link', [...LINKS]);
          if (outcome.kind === 'created') return void res.json(outcome.order);
          res.type('text/plain');
          for (const chunk of STREAM_CHUNKS) {
            res.write(chunk);
            await nextTurn();
          }
          res.end();
        },
      ),
    );
    app.use((error: unknown, _req: Request, res: Response, _next: NextFunction) => {
      state.errors.push(error);
      res.status(statusOf(error)).json({ error: 'handled' });
    });
    return listen(createServer(app));
  },
};

export const fastifyShop: Framework = {
  name: 'fastify',
  async start(config, effects, state, settings) {
    const app = Fastify();
    app.setErrorHandler((error, _request, reply) => {
      state.errors.push(error);
      return reply.code(statusOf(error)).send({ error: 'handled' });
    });
    const hooks = fastifyTransparent(
      config,
      route<FastifyRequest>((request) => request.headers.authorization, settings),
    );
    app.post('/orders', { ...hooks }, async (request, reply) => {
      const key = request.headers['idempotency-key'];
      const outcome = await takeOrder(
        effects,
        state,
        tenantOf(request.headers.authorization) ?? '',
        typeof key === 'string' ? key : '',
        request.body,
      );
      if (outcome.kind === 'thrown') throw outcome.error;
      if (outcome.kind === 'failed') return reply.code(outcome.status).send({ error: 'upstream failed' });
      reply
        .code(201)
        .header('location', `/orders/${outcome.order.id}`)
        .header('set-cookie', 'session=secret; Path=/')
        .header('x-debug', '1')
        .header('link', [...LINKS]);
      if (outcome.kind === 'created') return outcome.order;
      return reply.type('text/plain').send(Readable.from(STREAM_CHUNKS));
    });
    await app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = app.server.address() as AddressInfo;
    return { url: `http://127.0.0.1:${port}`, close: () => app.close() };
  },
};

export const honoShop: Framework = {
  name: 'fetch (Hono)',
  start(config, effects, state, settings) {
    const orders = fetchTransparent(
      config,
      route<FetchRequest<Context>>(({ request }) => request.headers.get('authorization'), settings),
      async (_request: globalThis.Request, c: Context) => {
        // The handler reads the body itself, after retrysafe has read it too.
        const outcome = await takeOrder(
          effects,
          state,
          tenantOf(c.req.header('authorization')) ?? '',
          c.req.header('idempotency-key') ?? '',
          await c.req.json(),
        );
        if (outcome.kind === 'thrown') throw outcome.error;
        if (outcome.kind === 'failed')
          return c.json({ error: 'upstream failed' }, outcome.status as ContentfulStatusCode);
        c.header('location', `/orders/${outcome.order.id}`);
        c.header('set-cookie', 'session=secret; Path=/');
        c.header('x-debug', '1');
        for (const line of LINKS) c.header('link', line, { append: true });
        if (outcome.kind === 'created') return c.json(outcome.order, 201);
        const chunks = STREAM_CHUNKS.map((chunk) => new TextEncoder().encode(chunk));
        const stream = new ReadableStream<Uint8Array>({
          pull(controller) {
            const chunk = chunks.shift();
            if (chunk === undefined) controller.close();
            else controller.enqueue(chunk);
          },
        });
        return c.body(stream, 201, { 'content-type': 'text/plain; charset=utf-8' });
      },
    );
    const app = new Hono();
    app.post('/orders', (c) => orders(c.req.raw, c));
    app.onError((error, c) => {
      state.errors.push(error);
      return c.json({ error: 'handled' }, statusOf(error) === 400 ? 400 : 500);
    });
    return listen(createAdaptorServer({ fetch: app.fetch }) as Server);
  },
};

export const koaShop: Framework = {
  name: 'koa',
  start(config, effects, state, settings) {
    const router = new Router();
    router.post(
      '/orders',
      koaTransparent(
        config,
        route<KoaContext>((ctx) => ctx.get('authorization'), settings),
      ),
      async (ctx) => {
        const outcome = await takeOrder(
          effects,
          state,
          tenantOf(ctx.get('authorization')) ?? '',
          ctx.get('idempotency-key'),
          ctx.request.body,
        );
        if (outcome.kind === 'thrown') throw outcome.error;
        if (outcome.kind === 'failed') {
          ctx.status = outcome.status;
          ctx.body = { error: 'upstream failed' };
          return;
        }
        ctx.status = 201;
        ctx.set('location', `/orders/${outcome.order.id}`);
        ctx.cookies.set('session', 'secret');
        ctx.set('x-debug', '1');
        ctx.set('link', [...LINKS]);
        if (outcome.kind === 'created') ctx.body = outcome.order;
        else {
          ctx.type = 'text/plain';
          ctx.body = Readable.from(STREAM_CHUNKS);
        }
      },
    );
    return startKoa(router, state.errors, (error) => ({ status: statusOf(error), body: { error: 'handled' } }));
  },
};

/** Node's own `http` server, through an adapter built from the public `retrysafe/adapter` only. */
export const nodeHttpShop: Framework = {
  name: 'node:http (retrysafe/adapter)',
  start(config, effects, state, settings) {
    const orders = httpTransparent(
      config,
      route<IncomingMessage>((req) => req.headers.authorization, settings),
      async (req, body) => {
        const key = req.headers['idempotency-key'];
        const outcome = await takeOrder(
          effects,
          state,
          tenantOf(req.headers.authorization) ?? '',
          typeof key === 'string' ? key : '',
          body,
        );
        if (outcome.kind === 'thrown') throw outcome.error;
        if (outcome.kind === 'failed')
          return {
            status: outcome.status,
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ error: 'upstream failed' }),
          };
        const headers = {
          location: `/orders/${outcome.order.id}`,
          'set-cookie': 'session=secret; Path=/',
          'x-debug': '1',
          link: [...LINKS],
        };
        if (outcome.kind === 'created')
          return {
            status: 201,
            headers: { ...headers, 'content-type': 'application/json' },
            body: JSON.stringify(outcome.order),
          };
        return {
          status: 201,
          headers: { ...headers, 'content-type': 'text/plain' },
          body: Readable.from(STREAM_CHUNKS),
        };
      },
    );
    return serveHttp({ 'POST /orders': orders }, state.errors, (error) => ({
      status: statusOf(error),
      body: { error: 'handled' },
    }));
  },
};

export const frameworks: readonly Framework[] = [
  expressShop,
  fastifyShop,
  honoShop,
  koaShop,
  nodeHttpShop,
  ...nestShops,
];
