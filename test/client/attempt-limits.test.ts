import { createServer } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { idempotentFetch, isIdempotentFetchError } from '../../src/client/index.js';
import { type ScriptedServer, startScriptedServer } from './scripted-server.js';

const post = { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"sku":"WIDGET"}' };
const quick = { baseDelayMs: 10, maxDelayMs: 50 };

/** A port nothing listens on: connections to it are refused. */
async function closedPort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const address = probe.address();
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  if (typeof address !== 'object' || address === null) throw new Error('no port');
  return address.port;
}

describe('the retry limit', () => {
  let server: ScriptedServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  it('returns the last 503 after the allowed attempts, marked as given up', async () => {
    server = await startScriptedServer(() => ({ status: 503, body: 'busy' }));
    const result = await idempotentFetch(`${server.url}/orders`, { ...post, retry: { ...quick, attempts: 3 } });

    expect(result).toMatchObject({ attempts: 3, gaveUp: 'attempts-exhausted', replayed: false });
    expect(result.response.status).toBe(503);
    expect(await result.response.text()).toBe('busy');
    expect(server.requests).toHaveLength(3);
  });

  it('throws attempts-exhausted with the last network error when no attempt gets an answer', async () => {
    const port = await closedPort();
    const error = await idempotentFetch(`http://127.0.0.1:${port}/orders`, {
      ...post,
      retry: { ...quick, attempts: 4 },
    }).catch((e: unknown) => e);

    expect(isIdempotentFetchError(error, 'attempts-exhausted')).toBe(true);
    if (!isIdempotentFetchError(error)) return;
    expect(error.attempts).toBe(4);
    // The cause is the failure itself, not fetch's "fetch failed" wrapper, and the message names it.
    expect(error.cause).toMatchObject({ code: 'ECONNREFUSED', port });
    expect(error.message).toBe(
      `All 4 attempts failed without an answer (network: connect ECONNREFUSED 127.0.0.1:${port}).`,
    );
    expect(error.idempotencyKey).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('retries an attempt that times out, and the next one answers', async () => {
    server = await startScriptedServer((_request, index) =>
      index === 0 ? { hang: true } : { status: 201, body: 'created' },
    );
    const result = await idempotentFetch(`${server.url}/orders`, {
      ...post,
      retry: { ...quick, attemptTimeoutMs: 2_000 },
    });

    expect(result.attempts).toBe(2);
    expect(result.response.status).toBe(201);
    expect(await result.response.text()).toBe('created');
    expect(server.requests[0]?.key).toBe(server.requests[1]?.key);
  });

  it('waits with growing backoff between attempts (each wait at least as long as the random draw asks)', async () => {
    server = await startScriptedServer(() => ({ status: 502 }));
    // A draw of 0.5 asks for half of each ceiling: 100, 200, 400 ms with a 200 ms base.
    await idempotentFetch(`${server.url}/orders`, {
      ...post,
      retry: { attempts: 4, baseDelayMs: 200, maxDelayMs: 10_000, random: () => 0.5 },
    });

    const gaps = server.requests.slice(1).map((r, i) => r.receivedAt - (server?.requests[i]?.receivedAt ?? 0));
    expect(gaps).toHaveLength(3);
    gaps.forEach((gap, i) => expect(gap).toBeGreaterThanOrEqual(100 * 2 ** i - 10));
  });
});
