import { afterEach, describe, expect, it } from 'vitest';
import { idempotentFetch, type IdempotentFetchError, isIdempotentFetchError } from '../../src/client/index.js';
import { manualClock } from '../../src/testing/manual-clock.js';
import { problemAnswer, type ScriptedServer, startScriptedServer } from './scripted-server.js';
import { waitFor } from '../support/wait-for.js';

const post = { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"sku":"WIDGET"}' };

async function thrown(run: () => Promise<unknown>): Promise<IdempotentFetchError> {
  const error = await run().then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!isIdempotentFetchError(error)) throw new Error(`expected an IdempotentFetchError, got ${String(error)}`);
  return error;
}

/**
 * A call on a manual clock that waits for its first retry, then moves the clock `advanceMs`; `sentAt` is the
 * clock's time of each attempt.
 */
async function afterFirstWait(url: string, deadlineMs: number, advanceMs: number) {
  const clock = manualClock();
  const sentAt: number[] = [];
  let waits = 0;
  const call = idempotentFetch(url, {
    ...post,
    fetch: (input, init) => {
      sentAt.push(clock.monotonic());
      return fetch(input, init);
    },
    retry: { deadlineMs, attempts: 10, clock, onRetry: () => (waits += 1) },
  });
  await waitFor(() => waits === 1);
  await clock.advance(advanceMs);
  return { result: await call, clock, sentAt };
}

describe('the deadline', () => {
  let server: ScriptedServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  it('stops retrying a server that always answers 503 Retry-After: 1, and returns its last answer', async () => {
    server = await startScriptedServer(() => problemAnswer(503, 'store-unavailable', { 'retry-after': '1' }));
    const { result, clock, sentAt } = await afterFirstWait(`${server.url}/orders`, 1500, 1000);

    // Settled within the deadline's 1.5 s of the call's clock.
    expect(clock.monotonic()).toBeLessThanOrEqual(1500);
    expect(result.response.status).toBe(503);
    expect(result.gaveUp).toBe('deadline-exceeded');
    // The first wait of 1 s fits in 1.5 s; the second would not, so the call stops instead of waiting.
    expect(result.attempts).toBeGreaterThanOrEqual(1);
    expect(result.attempts).toBeLessThanOrEqual(2);
    expect(server.requests).toHaveLength(result.attempts);
    const [first, second] = sentAt;
    if (first !== undefined && second !== undefined) expect(second - first).toBeGreaterThanOrEqual(1000);
    expect(new Set(server.requests.map((r) => r.key))).toEqual(new Set([result.idempotencyKey]));
  });

  it('times its deadline and waits by the clock it is given, not the system timers', async () => {
    server = await startScriptedServer(() => problemAnswer(503, 'store-unavailable', { 'retry-after': '30' }));
    const { result, clock, sentAt } = await afterFirstWait(`${server.url}/orders`, 60_000, 30_000);

    // The second wait of 30 s would reach the deadline: the call stops after two attempts, 30 s apart.
    expect(result).toMatchObject({ attempts: 2, gaveUp: 'deadline-exceeded' });
    expect(sentAt).toEqual([0, 30_000]);
    expect(clock.pending()).toBe(0);
  });

  it('reads a Retry-After date by the clock it is given', async () => {
    // An hour ahead of the system's time: a date read by the system's clock would ask for a wait past the deadline.
    const start = Math.floor(Date.now() / 1000) * 1000 + 3_600_000;
    server = await startScriptedServer((_request, index) =>
      index === 0
        ? { status: 503, headers: { 'retry-after': new Date(start + 30_000).toUTCString() } }
        : { status: 201 },
    );
    const clock = manualClock(start);
    const delays: number[] = [];
    const call = idempotentFetch(`${server.url}/orders`, {
      ...post,
      retry: { deadlineMs: 60_000, clock, onRetry: (event) => delays.push(event.delayMs) },
    });
    await waitFor(() => delays.length === 1);
    const [delay = 0] = delays;
    await clock.advance(delay);
    const result = await call;

    expect(delay).toBeGreaterThanOrEqual(30_000);
    expect(result).toMatchObject({ attempts: 2 });
    expect(result.response.status).toBe(201);
  });

  it('returns at once when Retry-After asks for a wait past the deadline', async () => {
    server = await startScriptedServer(() => ({ status: 429, headers: { 'retry-after': '60' } }));
    // The clock never moves: a call that waited would never settle.
    const clock = manualClock();
    const result = await idempotentFetch(`${server.url}/orders`, { ...post, retry: { deadlineMs: 10_000, clock } });

    expect(clock.pending()).toBe(0);
    expect(result).toMatchObject({ attempts: 1, gaveUp: 'deadline-exceeded' });
    expect(result.response.status).toBe(429);
    expect(server.requests).toHaveLength(1);
  });

  it('aborts the request in flight when the deadline passes', async () => {
    server = await startScriptedServer(() => ({ hang: true }));
    const clock = manualClock();
    const call = thrown(() =>
      idempotentFetch(`${server?.url}/orders`, {
        ...post,
        retry: { deadlineMs: 1500, attemptTimeoutMs: Infinity, clock },
      }),
    );
    await waitFor(() => server?.requests.length === 1);
    await clock.advance(1500);
    const error = await call;

    expect(error.code).toBe('deadline-exceeded');
    expect(error.attempts).toBe(1);
    expect(error.idempotencyKey).toBe(server.requests[0]?.key);
    await waitFor(() => server?.requests[0]?.abandoned === true);
  });

  it('treats a caller signal that times out as the deadline', async () => {
    server = await startScriptedServer(() => ({ hang: true }));
    // What AbortSignal.timeout() aborts with, once the attempt is in flight.
    const caller = new AbortController();
    const call = thrown(() => idempotentFetch(`${server?.url}/orders`, { ...post, signal: caller.signal }));
    await waitFor(() => server?.requests.length === 1);
    caller.abort(new DOMException('The operation timed out.', 'TimeoutError'));
    const error = await call;

    expect(error.code).toBe('deadline-exceeded');
    await waitFor(() => server?.requests[0]?.abandoned === true);
  });

  it('ends the call when the caller aborts, during an attempt or a wait', async () => {
    server = await startScriptedServer((_request, index) =>
      index === 0 ? { status: 503, headers: { 'retry-after': '5' } } : { status: 201 },
    );
    const controller = new AbortController();
    // The clock never moves: the 5 s wait ends only by the abort.
    const clock = manualClock();
    let waiting = false;
    const call = thrown(() =>
      idempotentFetch(`${server?.url}/orders`, {
        ...post,
        retry: { signal: controller.signal, clock, onRetry: () => (waiting = true) },
      }),
    );
    await waitFor(() => waiting);
    controller.abort();
    const error = await call;

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
