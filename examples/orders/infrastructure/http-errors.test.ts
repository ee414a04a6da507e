import { describe, expect, it } from 'vitest';
import { engines } from '../../../test/support/engines.js';
import { call, json } from '../testing/http.js';
import { operationRows } from '../testing/rows.js';
import { A, startService, useService } from '../testing/service.js';

const PROBLEMS = 'https://retrysafe.dev/examples/orders/problems/';

describe.each(engines)('framework and unexpected errors on $name', (factory) => {
  const t = useService(factory);

  const post = (key: string, raw: string, contentType: string) =>
    call(t.service.url, 'POST', '/v1/orders', { token: A.token, key, raw, contentType });

  it('reports the database as healthy', async () => {
    const answer = await call(t.service.url, 'GET', '/healthz');
    expect(answer.status).toBe(200);
    expect(json(answer)).toEqual({ status: 'ok', checks: { database: 'ok', schema: 'ok' } });
  });

  it.each([
    ['unreadable JSON', '{"cart_id": ', 'application/json', 400, 'body-invalid'],
    ['an empty JSON body', '', 'application/json', 400, 'body-invalid'],
    [
      'a body over the limit',
      JSON.stringify({ cart_id: 'x'.repeat(100_000) }),
      'application/json',
      413,
      'body-too-large',
    ],
    ['plain text', 'cart_id=c1', 'text/plain', 415, 'unsupported-media-type'],
    ['XML', '<order/>', 'application/xml', 415, 'unsupported-media-type'],
  ])('answers %s with problem+json and stores nothing', async (_name, raw, contentType, status, code) => {
    const key = `k-${code}-${contentType}`;
    const answer = await post(key, raw, contentType);
    expect(answer.status).toBe(status);
    expect(answer.headers['content-type']).toBe('application/problem+json');
    expect(json(answer)).toMatchObject({ type: `${PROBLEMS}${code}`, status });
    expect(await operationRows(t.engine.database, A.tenant, key)).toEqual([]);
  });

  it('answers unknown routes and malformed URLs with problem+json', async () => {
    const unknown = await call(t.service.url, 'DELETE', '/v1/orders', { token: A.token });
    expect(unknown.status).toBe(404);
    expect(json(unknown).type).toBe(`${PROBLEMS}not-found`);
    const malformed = await call(t.service.url, 'GET', '/v1/orders/%E0%A4%A', { token: A.token });
    expect(malformed.status).toBe(400);
    expect(malformed.headers['content-type']).toBe('application/problem+json');
    expect(json(malformed).type).toBe(`${PROBLEMS}request-invalid`);
  });

  it('answers an unexpected failure with a 500 that hides its cause, and stores nothing so a retry may run', async () => {
    const cart = await call(t.service.url, 'PUT', '/v1/carts/c-broken', {
      token: A.token,
      json: { items: [{ sku: 'WIDGET-1', qty: 1 }] },
    });
    await t.engine.database.query('ALTER TABLE orders RENAME TO orders_away');
    try {
      const body = JSON.stringify({
        cart_id: 'c-broken',
        cart_version: json(cart).cart_version,
        delivery_option: 'standard',
      });
      const failed = await post('k-broken', body, 'application/json');
      expect(failed.status).toBe(500);
      expect(failed.headers['content-type']).toBe('application/problem+json');
      expect(json(failed).type).toBe(`${PROBLEMS}internal-error`);
      expect(failed.body.toString()).not.toMatch(/relation|orders_away|does not exist/);
      expect(await operationRows(t.engine.database, A.tenant, 'k-broken')).toEqual([]);
      const read = await call(t.service.url, 'GET', '/v1/orders', { token: A.token });
      expect(read.status).toBe(500);
      expect(read.body.toString()).not.toMatch(/relation|does not exist/);
    } finally {
      await t.engine.database.query('ALTER TABLE orders_away RENAME TO orders');
    }
    const body = JSON.stringify({
      cart_id: 'c-broken',
      cart_version: json(cart).cart_version,
      delivery_option: 'standard',
    });
    const retry = await post('k-broken', body, 'application/json');
    expect(retry.status).toBe(201);
    expect(await operationRows(t.engine.database, A.tenant, 'k-broken')).toEqual([
      { state: 'completed', response_status: 201 },
    ]);
  });
});

describe.each(engines)('health without a database on $name', (factory) => {
  it('answers 503 problem+json when the database is gone', async () => {
    const engine = await factory.open();
    const service = await startService(engine.database);
    try {
      await engine.close();
      const answer = await call(service.url, 'GET', '/healthz');
      expect(answer.status).toBe(503);
      expect(answer.headers['content-type']).toBe('application/problem+json');
      expect(answer.headers['retry-after']).toBe('1');
      expect(json(answer).type).toBe(`${PROBLEMS}database-unavailable`);
      expect(json(answer).checks).toEqual({ database: 'failed', schema: 'ok' });
    } finally {
      await service.close();
    }
  });
});
