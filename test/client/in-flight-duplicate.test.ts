import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { idempotentFetch } from '../../src/client/index.js';
import { type Engine, engines } from '../support/engines.js';
import { type OrdersServer, startOrdersServer } from './orders-server.js';

// PGlite runs one transaction at a time, so there a duplicate never meets a lock held by the first attempt.
const concurrentEngines = engines.filter((factory) => factory.name.includes('node-postgres'));

describe.each(concurrentEngines)('a duplicate of an attempt still running on $name', (factory) => {
  let engine: Engine;
  let server: OrdersServer;
  let release: () => void = () => {};
  let entered: () => void = () => {};
  const firstAttemptRunning = new Promise<void>((resolve) => (entered = resolve));

  beforeAll(async () => {
    engine = await factory.open();
    server = await startOrdersServer(engine.database, {
      lockTimeoutMs: 200,
      beforeCommit: () =>
        new Promise<void>((resolve) => {
          release = resolve;
          entered();
        }),
    });
  });
  afterAll(async () => {
    release();
    await server.close();
    await engine.close();
  });

  it("gets 409 with Retry-After, retries, and receives the first attempt's answer as a replay", async () => {
    const key = 'order-2f9c1d';
    const body = JSON.stringify({ sku: 'WIDGET', qty: 1 });
    const headers = { 'content-type': 'application/json' };
    // The first attempt, sent by another process, holds the operation open inside its transaction.
    const first = fetch(`${server.url}/orders`, {
      method: 'POST',
      headers: { ...headers, 'idempotency-key': key },
      body,
    });
    await firstAttemptRunning;
    // Let it commit only once the duplicate has been told to come back later.
    const waitFor409 = setInterval(() => {
      if (server.requests.some((r) => r.status === 409)) {
        clearInterval(waitFor409);
        release();
      }
    }, 20);

    const result = await idempotentFetch(`${server.url}/orders`, {
      method: 'POST',
      headers,
      body,
      idempotencyKey: key,
      retry: { deadlineMs: 20_000 },
    });
    clearInterval(waitFor409);
    const original = await (await first).text();

    expect(result.attempts).toBeGreaterThanOrEqual(2);
    expect(result.replayed).toBe(true);
    expect(result.response.status).toBe(201);
    expect(await result.response.text()).toBe(original);
    expect(server.requests.filter((r) => r.status === 409).length).toBe(result.attempts - 1);
    expect(await server.orders()).toBe(1);
  });
});
