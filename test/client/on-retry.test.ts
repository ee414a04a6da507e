import { afterEach, describe, expect, it } from 'vitest';
import { idempotentFetch, type RetryEvent } from '../../src/client/index.js';
import { type ScriptedServer, startScriptedServer } from './scripted-server.js';

const order = {
  method: 'POST',
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify({ sku: 'WIDGET', qty: 2 }),
};

describe('onRetry', () => {
  let server: ScriptedServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  it('reports each retry once, before its wait: the attempt, the wait, the reason and what caused it', async () => {
    server = await startScriptedServer(
      (_request, index) =>
        [{ status: 503, headers: { 'retry-after': '1' } }, { status: 502 }, { hang: true } as const][index] ?? {
          status: 201,
          body: 'created',
        },
    );
    const events: RetryEvent[] = [];
    const result = await idempotentFetch(`${server.url}/orders`, {
      ...order,
      retry: {
        baseDelayMs: 100,
        maxDelayMs: 1000,
        attemptTimeoutMs: 3000,
        random: () => 0.5,
        onRetry: (event) => events.push(event),
      },
    });

    expect(result.response.status).toBe(201);
    expect(result.attempts).toBe(4);
    const key = server.requests[0]?.key;
    expect(events).toEqual([
      // Retry-After: 1 is longer than the draw (50 ms), so it is the wait.
      { attempt: 1, delayMs: 1000, reason: 'status', status: 503, retryAfterMs: 1000, idempotencyKey: key },
      { attempt: 2, delayMs: 100, reason: 'status', status: 502, retryAfterMs: undefined, idempotencyKey: key },
      {
        attempt: 3,
        delayMs: 200,
        reason: 'timeout',
        error: expect.objectContaining({ name: 'TimeoutError' }) as unknown,
        idempotencyKey: key,
      },
    ]);
  });

  it('is not called when the first answer is final, nor after the last attempt', async () => {
    server = await startScriptedServer(() => ({ status: 503 }));
    const events: RetryEvent[] = [];
    const result = await idempotentFetch(`${server.url}/orders`, {
      ...order,
      retry: { attempts: 2, baseDelayMs: 10, onRetry: (event) => events.push(event) },
    });
    expect(result.gaveUp).toBe('attempts-exhausted');
    expect(events.map((event) => event.attempt)).toEqual([1]);

    const final = await startScriptedServer(() => ({ status: 422 }));
    try {
      const none: RetryEvent[] = [];
      await idempotentFetch(`${final.url}/orders`, { ...order, retry: { onRetry: (event) => none.push(event) } });
      expect(none).toEqual([]);
    } finally {
      await final.close();
    }
  });
});
