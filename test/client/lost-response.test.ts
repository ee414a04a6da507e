import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { idempotentFetch, isIdempotentFetchError, type RetryEvent } from '../../src/client/index.js';
import { type Engine, engines } from '../support/engines.js';
import { firstResponses, type LossyProxy, startLossyProxy } from '../../examples/demo/lossy-proxy.js';
import { type OrdersServer, startOrdersServer } from './orders-server.js';

const order = {
  method: 'POST',
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify({ sku: 'WIDGET', qty: 2 }),
};
const quick = { baseDelayMs: 20, maxDelayMs: 100, deadlineMs: 20_000 };

describe.each(engines)('a lost response on $name', (factory) => {
  let engine: Engine;
  let server: OrdersServer;
  let proxy: LossyProxy | undefined;

  beforeAll(async () => {
    engine = await factory.open();
    server = await startOrdersServer(engine.database);
  });
  afterEach(async () => {
    await proxy?.close();
    proxy = undefined;
    await server.reset();
  });
  afterAll(async () => {
    await server.close();
    await engine.close();
  });

  const storedBody = async (key: string): Promise<string> => {
    const { rows } = await engine.database.query<{ body: Uint8Array }>(
      'SELECT response_body AS body FROM retrysafe_operations WHERE key = $1',
      [key],
    );
    expect(rows).toHaveLength(1);
    return Buffer.from(rows[0]?.body ?? new Uint8Array()).toString('utf8');
  };

  it('retries with the same key until it gets the original answer, and one order exists', async () => {
    proxy = await startLossyProxy(new URL(server.url), firstResponses(2));
    const result = await idempotentFetch(`${proxy.url}/orders`, { ...order, retry: quick });

    expect(proxy.dropped()).toBe(2);
    expect(result.attempts).toBe(3);
    expect(result.replayed).toBe(true);
    expect(result.gaveUp).toBeUndefined();
    expect(result.response.status).toBe(201);
    const body = await result.response.text();
    expect(body).toBe(await storedBody(result.idempotencyKey ?? ''));
    expect(await server.orders()).toBe(1);
    const { rows } = await engine.database.query<{ id: number }>('SELECT id FROM orders');
    expect(JSON.parse(body)).toEqual({ id: rows[0]?.id, sku: 'WIDGET', qty: 2 });
    expect(result.response.headers.get('location')).toBe(`/orders/${rows[0]?.id}`);
    expect(server.requests.map((r) => r.key)).toEqual([
      result.idempotencyKey,
      result.idempotencyKey,
      result.idempotencyKey,
    ]);
  });

  it('reports each lost answer to onRetry as a network retry with its error, until the replay ends the call', async () => {
    proxy = await startLossyProxy(new URL(server.url), firstResponses(2));
    const events: RetryEvent[] = [];
    const result = await idempotentFetch(`${proxy.url}/orders`, {
      ...order,
      retry: { ...quick, onRetry: (event) => events.push(event) },
    });

    expect(result.replayed).toBe(true);
    expect(events.map((event) => [event.attempt, event.reason, event.idempotencyKey])).toEqual([
      [1, 'network', result.idempotencyKey],
      [2, 'network', result.idempotencyKey],
    ]);
    for (const event of events) expect(event.reason === 'network' && event.error).toBeInstanceOf(Error);
  });

  it('gives up within its attempts when every answer is lost, and the key it reports recovers the outcome later', async () => {
    proxy = await startLossyProxy(new URL(server.url), firstResponses(100));
    const failure = await idempotentFetch(`${proxy.url}/orders`, { ...order, retry: { ...quick, attempts: 3 } }).catch(
      (error: unknown) => error,
    );

    expect(isIdempotentFetchError(failure, 'attempts-exhausted')).toBe(true);
    if (!isIdempotentFetchError(failure)) return;
    expect(failure.attempts).toBe(3);
    // The message says what went wrong on the wire, not only that something did.
    expect(failure.message).toMatch(/^All 3 attempts failed without an answer \(network: \S.*\)\.$/);
    expect(failure.message).not.toContain('fetch failed');
    expect(server.requests).toHaveLength(3);
    expect(await server.orders()).toBe(1);

    // Later, the connection is healthy again: the same key gets the stored answer and still one order.
    const later = await idempotentFetch(`${server.url}/orders`, {
      ...order,
      idempotencyKey: failure.idempotencyKey,
      retry: quick,
    });
    expect(later.attempts).toBe(1);
    expect(later.replayed).toBe(true);
    expect(await later.response.text()).toBe(await storedBody(failure.idempotencyKey ?? ''));
    expect(await server.orders()).toBe(1);
  });

  it('without the proxy, a first attempt executes once and is not a replay', async () => {
    const result = await idempotentFetch(`${server.url}/orders`, { ...order, retry: quick });
    expect(result).toMatchObject({ attempts: 1, replayed: false, gaveUp: undefined });
    expect(result.response.status).toBe(201);
    expect(await server.orders()).toBe(1);
  });
});
