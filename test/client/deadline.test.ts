import { afterEach, describe, expect, it } from 'vitest';
import { idempotentFetch, type IdempotentFetchError, isIdempotentFetchError } from '../../src/client/index.js';
import { problemAnswer, type ScriptedServer, startScriptedServer } from './scripted-server.js';
import { waitFor } from '../support/wait-for.js';

const post = { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"sku":"WIDGET"}' };

/** The whole call's duration; compared only with generous bounds, never as a speed target. */
async function timed<T>(run: () => Promise<T>): Promise<{ value: T; ms: number }> {
  const start = performance.now();
  const value = await run();
  return { value, ms: performance.now() - start };
}

async function thrown(run: () => Promise<unknown>): Promise<IdempotentFetchError> {
  const error = await run().then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!isIdempotentFetchError(error)) throw new Error(`expected an IdempotentFetchError, got ${String(error)}`);
  return error;
}

describe('the deadline', () => {
  let server: ScriptedServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  it('stops retrying a server that always answers 503 Retry-After: 1, and returns its last answer', async () => {
    server = await startScriptedServer(() => problemAnswer(503, 'store-unavailable', { 'retry-after': '1' }));
    const { value: result, ms } = await timed(() =>
      idempotentFetch(`${server?.url}/orders`, { ...post, retry: { deadlineMs: 1500, attempts: 10 } }),
    );

    expect(ms).toBeLessThan(5000);
    expect(result.response.status).toBe(503);
    expect(result.gaveUp).toBe('deadline-exceeded');
    // The first wait of 1 s fits in 1.5 s; the second would not, so the call stops instead of waiting.
    expect(result.attempts).toBeGreaterThanOrEqual(1);
    expect(result.attempts).toBeLessThanOrEqual(2);
    expect(server.requests).toHaveLength(result.attempts);
    const [first, second] = server.requests;
    if (first !== undefined && second !== undefined)
      expect(second.receivedAt - first.receivedAt).toBeGreaterThanOrEqual(990);
    expect(new Set(server.requests.map((r) => r.key))).toEqual(new Set([result.idempotencyKey]));
  });

  it('returns at once when Retry-After asks for a wait past the deadline', async () => {
    server = await startScriptedServer(() => ({ status: 429, headers: { 'retry-after': '60' } }));
    const { value: result, ms } = await timed(() =>
      idempotentFetch(`${server?.url}/orders`, { ...post, retry: { deadlineMs: 10_000 } }),
    );

    expect(ms).toBeLessThan(5000);
    expect(result).toMatchObject({ attempts: 1, gaveUp: 'deadline-exceeded' });
    expect(result.response.status).toBe(429);
    expect(server.requests).toHaveLength(1);
  });

  it('aborts the request in flight when the deadline passes', async () => {
    server = await startScriptedServer(() => ({ hang: true }));
    const { value: error, ms } = await timed(() =>
      thrown(() =>
        idempotentFetch(`${server?.url}/orders`, { ...post, retry: { deadlineMs: 1500, attemptTimeoutMs: Infinity } }),
      ),
    );

    expect(ms).toBeLessThan(5000);
    expect(error.code).toBe('deadline-exceeded');
    expect(error.attempts).toBe(1);
    expect(error.idempotencyKey).toBe(server.requests[0]?.key);
    await waitFor(() => server?.requests[0]?.abandoned === true);
  });

  it('treats a caller signal that times out as the deadline', async () => {
    server = await startScriptedServer(() => ({ hang: true }));
    const { value: error, ms } = await timed(() =>
      thrown(() => idempotentFetch(`${server?.url}/orders`, { ...post, signal: AbortSignal.timeout(1500) })),
    );

    expect(ms).toBeLessThan(5000);
    expect(error.code).toBe('deadline-exceeded');
    await waitFor(() => server?.requests[0]?.abandoned === true);
  });

  it('ends the call when the caller aborts, during an attempt or a wait', async () => {
    server = await startScriptedServer((_request, index) =>
      index === 0 ? { status: 503, headers: { 'retry-after': '5' } } : { status: 201 },
    );
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 500);
    const { value: error, ms } = await timed(() =>
      thrown(() => idempotentFetch(`${server?.url}/orders`, { ...post, retry: { signal: controller.signal } })),
    );

    expect(ms).toBeLessThan(4000);
    expect(error.code).toBe('aborted');
    expect(error.attempts).toBe(1);
    expect(server.requests).toHaveLength(1);
  });

  it('sends nothing when the caller has already aborted', async () => {
    server = await startScriptedServer(() => ({ status: 201 }));
    const error = await thrown(() =>
      idempotentFetch(`${server?.url}/orders`, { ...post, signal: AbortSignal.abort() }),
    );
    expect(error.code).toBe('aborted');
    expect(error.attempts).toBe(0);
    expect(server.requests).toHaveLength(0);
  });
});
