import Fastify, { type FastifyInstance, type FastifyRequest } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { atomic } from '../../src/adapters/fastify/index.js';
import { type AtomicRoute, idempotency, invalid, valid } from '../../src/index.js';
import { postgresStore } from '../../src/postgres/index.js';
import type { SqlClient } from '../../src/store/sql-client.js';
import { engines } from '../support/engines.js';
import { newKey, useEngine } from './harness.js';

/** A value a route function gives back later, after a turn of the event loop, as a lookup in a session store would. */
const later = <T>(value: T): Promise<T> => new Promise((resolve) => setImmediate(() => resolve(value)));

type Request = FastifyRequest<{ Headers: Record<string, string | undefined> }>;

/** The same route with its tenant, authorisation, key and input given at once or as promises. */
function route(
  settle: <T>(value: T) => T | Promise<T>,
  runs: string[],
): AtomicRoute<Request, { sku: string }, SqlClient> {
  return {
    operation: 'orders.create@1',
    tenant: (request) => settle(request.headers['x-tenant']),
    authorize: (request) => settle(request.headers['x-revoked'] === undefined),
    key: (request) => settle(request.headers['x-key']),
    input: (_request, body) => {
      const sku = (body as { sku?: unknown } | undefined)?.sku;
      return settle(
        typeof sku === 'string' ? valid({ sku }) : invalid({ status: 400, body: { error: 'sku is required' } }),
      );
    },
    async handler({ tx, tenant, input, identity }) {
      runs.push(identity?.key ?? '');
      const { rows } = await tx.query<{ id: number }>(
        'INSERT INTO orders (tenant, sku, qty) VALUES ($1, $2, 1) RETURNING id',
        [tenant, input.sku],
      );
      return { status: 201, body: { id: rows[0]?.id, sku: input.sku } };
    },
  };
}

describe.each(engines)('route functions that answer with promises, on $name', (engine) => {
  const ref = useEngine(engine);
  const runs = { now: [] as string[], later: [] as string[] };
  let app: FastifyInstance | undefined;
  beforeAll(async () => {
    const config = idempotency({ store: postgresStore(ref.engine.database), replayCache: true });
    app = Fastify();
    app.post(
      '/now',
      atomic(
        config,
        route((value) => value, runs.now),
      ),
    );
    app.post('/later', atomic(config, route(later, runs.later)));
    await app.ready();
  });
  afterAll(() => app?.close());

  const post = async (path: '/now' | '/later', headers: Record<string, string>, body: unknown = { sku: 'A' }) => {
    if (app === undefined) throw new Error('The app is not running yet.');
    const answer = await app.inject({
      method: 'POST',
      url: path,
      headers: { 'content-type': 'application/json', 'x-tenant': 'tenant-a', ...headers },
      payload: JSON.stringify(body),
    });
    const type =
      answer.headers['content-type'] === 'application/problem+json'
        ? answer.json<{ type: string }>().type.replace(/.*\//, '')
        : undefined;
    return {
      status: answer.statusCode,
      type,
      body: type === undefined ? answer.body : undefined,
      replayed: answer.headers['idempotent-replayed'],
    };
  };

  it.each([
    ['no tenant', () => ({ 'x-tenant': '', 'x-key': newKey() }), { status: 401, type: 'unauthenticated' }],
    ['a revoked caller', () => ({ 'x-revoked': '1', 'x-key': newKey() }), { status: 403, type: 'forbidden' }],
    ['no key', () => ({}), { status: 400, type: 'idempotency-key-missing' }],
  ] as const)('refuses %s alike, whether the function answered at once or later', async (_case, headers, refusal) => {
    const now = await post('/now', headers());
    const deferred = await post('/later', headers());
    expect(now).toMatchObject(refusal);
    expect(deferred).toEqual(now);
    expect([...runs.now, ...runs.later]).toEqual([]);
  });

  it('answers invalid input with the route reply alike', async () => {
    const now = await post('/now', { 'x-key': newKey() }, {});
    const deferred = await post('/later', { 'x-key': newKey() }, {});
    expect(now).toEqual({ status: 400, type: undefined, body: '{"error":"sku is required"}', replayed: undefined });
    expect(deferred).toEqual(now);
  });

  it('runs a new key once and replays it alike', async () => {
    for (const path of ['/now', '/later'] as const) {
      const key = newKey();
      const first = await post(path, { 'x-key': key });
      const retry = await post(path, { 'x-key': key });
      const mismatch = await post(path, { 'x-key': key }, { sku: 'B' });
      expect(first).toMatchObject({ status: 201, replayed: undefined });
      expect(retry).toEqual({ ...first, replayed: 'true' });
      expect(mismatch).toMatchObject({ status: 422, type: 'fingerprint-mismatch' });
    }
    expect(runs.later).toHaveLength(1);
    expect(runs.now).toHaveLength(1);
  });
});
