import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { createAdaptorServer } from '@hono/node-server';
import express, {
  type NextFunction,
  type Request as ExpressRequest,
  type RequestHandler,
  type Response as ExpressResponse,
} from 'express';
import Fastify from 'fastify';
import { type Context, Hono } from 'hono';
import Router from '@koa/router';
import type { Context as KoaContext } from 'koa';
import {
  atomic as expressAtomic,
  keepRawBody as keepExpressRawBody,
  specification as expressSpecification,
} from '../../src/adapters/express/index.js';
import { atomic as fastifyAtomic, specification as fastifySpecification } from '../../src/adapters/fastify/index.js';
import { atomic as fetchAtomic, specification as fetchSpecification } from '../../src/adapters/fetch/index.js';
import { atomic as koaAtomic, specification as koaSpecification } from '../../src/adapters/koa/index.js';
import {
  type AtomicRoute,
  type HandlerReply,
  idempotency,
  type Idempotency,
  type IdempotencyOptions,
} from '../../src/index.js';
import { postgresStore } from '../../src/postgres/index.js';
import type { SqlClient, SqlDatabase } from '../../src/store/sql-client.js';
import { type Gate, gate } from './gate.js';
import { listen } from './listen.js';
import { startKoa } from './koa-app.js';
import { atomic as httpAtomic, specification as httpSpecification } from './node-http-adapter.js';
import { serveHttp } from './node-http-app.js';
import { type ErrorAnswer, nestAdapters, nestAdaptersWithoutText } from './nest-apps.js';
import { allSuites, selectedFrameworks } from './suites.js';

/**
 * The app every adapter test runs, each route scoped per user (`principal`): `POST /orders` (`orders.create@1`) and
 * `POST /refunds` (`refunds.create@1`) insert an order through `tx`;
 * `GET /orders` and `PUT /orders` (`orders.read@1`) only count themselves.
 * `POST /imports` (`imports.create@1`) is `POST /orders` with the route
 * options: its key is the body's `ref`, its policy is `IMPORTS_POLICY`, its
 * retention depends on the tenant (`importsRetention`), and its hooks are
 * recorded in `hooks`.
 *
 * The body steers the handler: `{ sku, qty, delayMs }`, where sku is
 * - `SLOW…`: sleep `delayMs` (default 1000) inside the transaction first;
 * - `…THROW…`, `…500…`, `RATE…`: insert, then throw, answer 500, answer 429;
 * - `…-ONCE`: fail that way only on the first invocation for the identity;
 * - `OUT-OF-STOCK`: insert nothing and answer a 422 business rejection;
 * - `STREAM`: insert, then answer a server-sent-event stream as the body;
 * - anything else: insert and answer 201 `{ id, sku, qty }`.
 */
export interface AppState {
  /** Every handler invocation, in order. */
  readonly invocations: {
    readonly operation: string;
    readonly tenant: string;
    readonly key: string | undefined;
    readonly sku: string;
  }[];
  /** What reached the framework's error handling. */
  readonly errors: unknown[];
  /** Called when the handler has done its writes, just before it answers 201; tests set it to act at that moment. */
  beforeReply: (() => void | Promise<void>) | undefined;
  /** The hooks of `POST /imports` as they were called: `replay`, `conflict:<code>`, `refusal:<code>`. */
  readonly hooks: string[];
}

export interface RunningApp {
  readonly url: string;
  readonly state: AppState;
  close(): Promise<void>;
}

export interface AdapterFactory {
  readonly name: string;
  start(config: Idempotency<SqlClient>, state: AppState): Promise<{ readonly url: string; close(): Promise<void> }>;
}

export const OUT_OF_STOCK_TYPE = 'https://shop.example/problems/out-of-stock';

export const IMPORTS_POLICY = 'https://shop.example/docs/idempotency#imports';

/** `POST /imports` keeps tenant-b's answers one minute, everyone else's two hours. */
export function importsRetention(tenant: string): { responseSeconds: number } {
  return { responseSeconds: tenant === 'tenant-b' ? 60 : 7200 };
}

/** Tenants the identity's column refuses, as a route's tenant function might return them. */
export const UNSTORABLE_TENANTS = {
  'token-long-tenant': 't'.repeat(256),
  'token-nul-tenant': 'tenant\u0000a',
  'token-surrogate-tenant': 'tenant-\ud800',
} as const;

const TOKENS: Readonly<Record<string, string>> = {
  'token-a': 'tenant-a',
  'token-a2': 'tenant-a',
  'token-a-service': 'tenant-a',
  'token-b': 'tenant-b',
  'token-revoked': 'tenant-a',
  'token-longest-tenant': 't'.repeat(255),
  ...UNSTORABLE_TENANTS,
};

/** The user each token names: `token-a2` is another user of `tenant-a`, `token-a-service` names none. */
const USERS: Readonly<Record<string, string>> = {
  'token-a': 'user-1',
  'token-a2': 'user-2',
  'token-b': 'user-3',
  'token-revoked': 'user-1',
  'token-longest-tenant': 'user-4',
};

export const ORDERS_TABLE = `CREATE TABLE IF NOT EXISTS orders (
  id serial PRIMARY KEY,
  tenant text NOT NULL,
  sku text NOT NULL,
  qty int NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
)`;

/** Starts `adapter` on 127.0.0.1 with a fresh state, over `database` (migrated, with the orders table). */
export async function startApp(
  adapter: AdapterFactory,
  database: SqlDatabase<SqlClient>,
  options: Omit<IdempotencyOptions<SqlClient>, 'store'> = {},
): Promise<RunningApp> {
  const state: AppState = { invocations: [], errors: [], beforeReply: undefined, hooks: [] };
  const config = idempotency({ ...options, store: postgresStore(database) });
  const server = await adapter.start(config, state);
  return { url: server.url, state, close: () => server.close() };
}

/**
 * Holds the next handler's reply, after its writes, until the gate opens: its attempt keeps the identity claimed for as
 * long as the test needs, where a `SLOW` sleep lets go on a timer that a busy machine can outrun.
 */
export function holdNextReply(state: AppState): Gate {
  const held = gate();
  state.beforeReply = () => {
    state.beforeReply = undefined;
    return held.opened;
  };
  return held;
}

/** Forgets every invocation and error, and empties the tables, between tests. */
export async function resetApp(app: RunningApp, database: SqlDatabase<SqlClient>): Promise<void> {
  app.state.invocations.length = 0;
  app.state.errors.length = 0;
  app.state.beforeReply = undefined;
  app.state.hooks.length = 0;
  await database.query('DELETE FROM orders');
  await database.query('DELETE FROM retrysafe_operations');
}

/** Headers a handler sends on several lines each, steered by the sku `LINES`. */
export const MANY_LINES = {
  link: ['</orders/1>; rel="self"', '</orders>; rel="collection"'],
  vary: ['Accept', 'Accept-Language'],
  'set-cookie': ['session=secret', 'theme=dark'],
} as const;

export function routes<Req>(authorization: (request: Req) => string | undefined, state: AppState) {
  const token = (request: Req): string | undefined => /^Bearer (\S+)$/.exec(authorization(request) ?? '')?.[1];
  const base = {
    tenant: (request: Req) => TOKENS[token(request) ?? ''],
    principal: (request: Req) => USERS[token(request) ?? ''],
    authorize: (request: Req) => token(request) !== 'token-revoked',
  };
  const create = (operation: string, prefix: string): AtomicRoute<Req, unknown, SqlClient> => ({
    ...base,
    operation,
    async handler({ tx, tenant, identity, input }) {
      const { sku = '', qty = 1, delayMs = 1000 } = (input ?? {}) as { sku?: string; qty?: number; delayMs?: number };
      const earlier = state.invocations.filter(
        (i) => i.operation === operation && i.tenant === tenant && i.key === identity?.key,
      ).length;
      state.invocations.push({ operation, tenant, key: identity?.key, sku });
      const fails = !sku.endsWith('-ONCE') || earlier === 0;
      if (sku.startsWith('SLOW')) await sleep(delayMs);
      if (sku === 'OUT-OF-STOCK') return outOfStock();
      const { rows } = await tx.query<{ id: number }>(
        'INSERT INTO orders (tenant, sku, qty) VALUES ($1, $2, $3) RETURNING id',
        [tenant, sku, qty],
      );
      const id = rows[0]?.id;
      if (fails && sku.includes('THROW')) throw new Error(`${sku}: the handler failed after its insert`);
      // A handler's mistake: a failed statement caught without a savepoint leaves its transaction aborted.
      if (sku === 'SWALLOWS-A-FAILURE') await tx.query('SELECT 1 / 0').catch(() => undefined);
      if (fails && sku.includes('500'))
        return { status: 500, body: { error: 'the handler answered 500 after its insert' } };
      if (fails && sku.startsWith('RATE'))
        return { status: 429, headers: { 'retry-after': '7' }, body: { error: 'slow down' } };
      if (sku === 'LINES') return { status: 201, headers: MANY_LINES, body: { id } };
      if (sku === 'STREAM')
        return {
          status: 200,
          headers: { 'content-type': 'text/event-stream' },
          body: Readable.from([`data: ${id}\n\n`]),
        };
      await state.beforeReply?.();
      return {
        status: 201,
        headers: { location: `${prefix}/${id}`, 'set-cookie': 'session=secret', 'x-debug': '1' },
        body: { id, sku, qty },
      };
    },
  });
  const read: AtomicRoute<Req, unknown, SqlClient> = {
    ...base,
    operation: 'orders.read@1',
    handler({ tenant, identity }) {
      state.invocations.push({ operation: 'orders.read@1', tenant, key: identity?.key, sku: '' });
      return Promise.resolve({ status: 200, body: { invocation: state.invocations.length } });
    },
  };
  const imports: AtomicRoute<Req, unknown, SqlClient> = {
    ...create('imports.create@1', '/imports'),
    describedBy: IMPORTS_POLICY,
    key: (_request, body) => (body as { ref?: string } | undefined)?.ref,
    retention: ({ tenant }) => importsRetention(tenant),
    // A duplicate of a running import is answered 409 at once rather than waiting for it.
    lockTimeoutMs: 0,
    onReplay: () => state.hooks.push('replay'),
    onConflict: ({ code }) => state.hooks.push(`conflict:${code}`),
    onRefusal: ({ code }) => state.hooks.push(`refusal:${code}`),
  };
  return {
    orders: create('orders.create@1', '/orders'),
    refunds: create('refunds.create@1', '/refunds'),
    read,
    imports,
  };
}

function outOfStock(): HandlerReply {
  return {
    status: 422,
    headers: { 'content-type': 'application/problem+json', 'set-cookie': 'session=secret' },
    body: { type: OUT_OF_STOCK_TYPE, title: 'Out of stock', status: 422, detail: 'No stock left for this SKU.' },
  };
}

/** A framework's own 4xx (a body that is not JSON, say) stays a 4xx; anything else is the handler's failure, 500. */
export function clientErrorStatus(error: unknown): number | undefined {
  const status =
    typeof error === 'object' && error !== null
      ? ((error as { status?: unknown; statusCode?: unknown }).statusCode ?? (error as { status?: unknown }).status)
      : undefined;
  return typeof status === 'number' && status >= 400 && status < 500 ? status : undefined;
}

/** The answer every contract app's error handler gives. */
export const contractErrors: ErrorAnswer = (error) => {
  const status = clientErrorStatus(error);
  return { status: status ?? 500, body: { error: status === undefined ? 'internal' : 'bad request' } };
};

export const expressAdapter: AdapterFactory = expressWith('express', express.json({ verify: keepExpressRawBody }));

/** Express behind `express.json()` alone, as without the documented `verify: keepRawBody`: the body's text is not kept. */
export const expressWithoutText: AdapterFactory = expressWith('express, express.json() alone', express.json());

function expressWith(name: string, json: RequestHandler): AdapterFactory {
  return {
    name,
    start(config, state) {
      const r = routes<ExpressRequest>((req) => req.get('authorization'), state);
      const app = express();
      app.use(json);
      if (config.specification.path !== undefined) app.use(expressSpecification(config));
      app.post('/orders', expressAtomic(config, r.orders));
      app.post('/refunds', expressAtomic(config, r.refunds));
      app.post('/imports', expressAtomic(config, r.imports));
      app.get('/orders', expressAtomic(config, r.read));
      app.put('/orders', expressAtomic(config, r.read));
      app.use((error: unknown, _req: ExpressRequest, res: ExpressResponse, _next: NextFunction) => {
        state.errors.push(error);
        res
          .status(clientErrorStatus(error) ?? 500)
          .json({ error: clientErrorStatus(error) === undefined ? 'internal' : 'bad request' });
      });
      return listen(createServer(app));
    },
  };
}

export const fastifyAdapter: AdapterFactory = {
  name: 'fastify',
  async start(config, state) {
    const r = routes<{ headers: { authorization?: string } }>((req) => req.headers.authorization, state);
    const app = Fastify();
    app.setErrorHandler((error, _request, reply) => {
      state.errors.push(error);
      return reply
        .code(clientErrorStatus(error) ?? 500)
        .send({ error: clientErrorStatus(error) === undefined ? 'internal' : 'bad request' });
    });
    if (config.specification.path !== undefined) await app.register(fastifySpecification(config));
    app.post('/orders', fastifyAtomic(config, r.orders));
    app.post('/refunds', fastifyAtomic(config, r.refunds));
    app.post('/imports', fastifyAtomic(config, r.imports));
    app.get('/orders', fastifyAtomic(config, r.read));
    app.put('/orders', fastifyAtomic(config, r.read));
    await app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = app.server.address() as AddressInfo;
    return { url: `http://127.0.0.1:${port}`, close: () => app.close() };
  },
};

export const honoAdapter: AdapterFactory = {
  name: 'fetch (Hono)',
  start(config, state) {
    const r = routes<{ request: Request }>((req) => req.request.headers.get('authorization') ?? undefined, state);
    const orders = fetchAtomic<unknown, SqlClient, Context>(config, r.orders);
    const refunds = fetchAtomic<unknown, SqlClient, Context>(config, r.refunds);
    const read = fetchAtomic<unknown, SqlClient, Context>(config, r.read);
    const imports = fetchAtomic<unknown, SqlClient, Context>(config, r.imports);
    const app = new Hono();
    if (config.specification.path !== undefined) {
      const serve = fetchSpecification(config);
      app.get(config.specification.path, (c) => serve(c.req.raw));
      app.get(`${config.specification.path}/openapi.json`, (c) => serve(c.req.raw));
    }
    app.post('/orders', (c) => orders(c.req.raw, c));
    app.post('/refunds', (c) => refunds(c.req.raw, c));
    app.post('/imports', (c) => imports(c.req.raw, c));
    app.get('/orders', (c) => read(c.req.raw, c));
    app.put('/orders', (c) => read(c.req.raw, c));
    app.onError((error, c) => {
      state.errors.push(error);
      return c.json({ error: 'internal' }, 500);
    });
    return listen(createAdaptorServer({ fetch: app.fetch }) as Server);
  },
};

export const koaAdapter: AdapterFactory = {
  name: 'koa',
  start(config, state) {
    const r = routes<KoaContext>((ctx) => ctx.get('authorization') || undefined, state);
    const router = new Router();
    if (config.specification.path !== undefined) {
      router.get(config.specification.path, koaSpecification(config));
      router.get(`${config.specification.path}/openapi.json`, koaSpecification(config));
    }
    router.post('/orders', koaAtomic(config, r.orders));
    router.post('/refunds', koaAtomic(config, r.refunds));
    router.post('/imports', koaAtomic(config, r.imports));
    router.get('/orders', koaAtomic(config, r.read));
    router.put('/orders', koaAtomic(config, r.read));
    return startKoa(router, state.errors, contractErrors);
  },
};

/** Node's own `http` server, through an adapter built from the public `retrysafe/adapter` only (node-http-adapter.ts). */
export const nodeHttpAdapter: AdapterFactory = {
  name: 'node:http (retrysafe/adapter)',
  start(config, state) {
    const r = routes<IncomingMessage>((req) => req.headers.authorization, state);
    const read = httpAtomic(config, r.read);
    const path = config.specification.path;
    const specification =
      path === undefined
        ? {}
        : { [`GET ${path}`]: httpSpecification(config), [`GET ${path}/openapi.json`]: httpSpecification(config) };
    return serveHttp(
      {
        'POST /orders': httpAtomic(config, r.orders),
        'POST /refunds': httpAtomic(config, r.refunds),
        'POST /imports': httpAtomic(config, r.imports),
        'GET /orders': read,
        'PUT /orders': read,
        ...specification,
      },
      state.errors,
      contractErrors,
    );
  },
};

/**
 * The adapters every adapter suite runs through. The one built from
 * `retrysafe/adapter` alone joins them in `.ci/run` (RETRYSAFE_SUITES=all);
 * `npm test` runs it through the transparent and leased suites, to stay
 * within its time.
 */
export const adapters: readonly AdapterFactory[] = selectedFrameworks([
  expressAdapter,
  fastifyAdapter,
  honoAdapter,
  koaAdapter,
  ...(allSuites ? [nodeHttpAdapter] : []),
  ...nestAdapters,
]);

/**
 * The adapters whose framework parses the body before retrysafe sees it, set
 * up without the documented opt-in that keeps its text.
 */
export const adaptersWithoutText: readonly AdapterFactory[] = [expressWithoutText, ...nestAdaptersWithoutText];
