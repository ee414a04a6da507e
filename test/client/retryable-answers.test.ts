import { afterEach, describe, expect, it } from 'vitest';
import { idempotentFetch } from '../../src/client/index.js';
import { problemAnswer, type ScriptedAnswer, type ScriptedServer, startScriptedServer } from './scripted-server.js';

const post = { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"sku":"WIDGET"}' };
const quick = { baseDelayMs: 10, maxDelayMs: 50 };
const created: ScriptedAnswer = { status: 201, headers: { 'content-type': 'application/json' }, body: '{"id":7}' };
const replay: ScriptedAnswer = {
  status: 201,
  headers: { 'content-type': 'application/json', 'idempotent-replayed': 'true' },
  body: '{"id":7}',
};

describe('which answers are retried', () => {
  let server: ScriptedServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  const call = async (script: (index: number) => ScriptedAnswer, attempts = 5) => {
    server = await startScriptedServer((_request, index) => script(index));
    return idempotentFetch(`${server.url}/orders`, { ...post, retry: { ...quick, attempts } });
  };

  it('retries a 409 in progress with Retry-After, honours the wait, and ends with the replay', async () => {
    const result = await call((i) =>
      i < 2 ? problemAnswer(409, 'operation-in-progress', { 'retry-after': '1' }) : replay,
    );

    expect(result).toMatchObject({ attempts: 3, replayed: true, gaveUp: undefined });
    expect(await result.response.json()).toEqual({ id: 7 });
    const requests = server?.requests ?? [];
    expect(new Set(requests.map((r) => r.key))).toEqual(new Set([result.idempotencyKey]));
    for (let i = 1; i < requests.length; i += 1) {
      expect((requests[i]?.receivedAt ?? 0) - (requests[i - 1]?.receivedAt ?? 0)).toBeGreaterThanOrEqual(990);
    }
  });

  it('retries a 409 whose problem type says in progress, even without Retry-After', async () => {
    const result = await call((i) => (i === 0 ? problemAnswer(409, 'operation-in-progress') : replay));
    expect(result).toMatchObject({ attempts: 2, replayed: true });
  });

  it.each([
    [
      'a business conflict',
      { status: 409, headers: { 'content-type': 'application/json' }, body: '{"error":"sku taken"}' },
    ],
    ['an outcome awaiting reconciliation', problemAnswer(409, 'outcome-unknown')],
  ] as const)('does not retry a 409 that is %s, and its body is still readable', async (_name, answer) => {
    const result = await call(() => answer);
    expect(result).toMatchObject({ attempts: 1, gaveUp: undefined });
    expect(result.response.status).toBe(409);
    expect(await result.response.text()).toBe(answer.body);
    expect(server?.requests).toHaveLength(1);
  });

  it.each([400, 401, 403, 404, 410, 422, 500, 501])('does not retry %i', async (status) => {
    const result = await call(() => ({ status, headers: { 'retry-after': '1' } }));
    expect(result).toMatchObject({ attempts: 1, gaveUp: undefined });
    expect(result.response.status).toBe(status);
    expect(server?.requests).toHaveLength(1);
  });

  it.each([425, 429, 502, 503, 504])('retries %i until the server answers', async (status) => {
    const result = await call((i) => (i < 2 ? { status } : created));
    expect(result).toMatchObject({ attempts: 3, replayed: false, gaveUp: undefined });
    expect(result.response.status).toBe(201);
  });
});
