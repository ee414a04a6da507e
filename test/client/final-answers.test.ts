import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { idempotentFetch } from '../../src/client/index.js';
import { type Engine, engines } from '../support/engines.js';
import { type OrdersServer, startOrdersServer } from './orders-server.js';

const headers = { 'content-type': 'application/json' };
const quick = { baseDelayMs: 10, maxDelayMs: 50 };

describe.each(engines)('answers from a retrysafe server that are final, on $name', (factory) => {
  let engine: Engine;
  let server: OrdersServer;

  beforeAll(async () => {
    engine = await factory.open();
    server = await startOrdersServer(engine.database);
  });
  afterEach(async () => {
    await server.reset();
  });
  afterAll(async () => {
    await server.close();
    await engine.close();
  });

  it('sends a request the server rejects as invalid (400) once', async () => {
    const result = await idempotentFetch(`${server.url}/orders`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ sku: 'WIDGET' }),
      retry: quick,
    });

    expect(result).toMatchObject({ attempts: 1, replayed: false, gaveUp: undefined });
    expect(result.response.status).toBe(400);
    expect(server.requests).toHaveLength(1);
    expect(await server.orders()).toBe(0);
  });

  it('sends a reused key with a different body (422) once', async () => {
    const idempotencyKey = 'order-7d41a0';
    const first = await idempotentFetch(`${server.url}/orders`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ sku: 'WIDGET', qty: 1 }),
      idempotencyKey,
      retry: quick,
    });
    const reused = await idempotentFetch(`${server.url}/orders`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ sku: 'WIDGET', qty: 9 }),
      idempotencyKey,
      retry: quick,
    });

    expect(first.response.status).toBe(201);
    expect(reused).toMatchObject({ attempts: 1, replayed: false, gaveUp: undefined, idempotencyKey });
    expect(reused.response.status).toBe(422);
    expect(reused.response.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(server.requests.map((r) => r.status)).toEqual([201, 422]);
    expect(await server.orders()).toBe(1);
  });
});
