import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { engines } from '../../../test/support/engines.js';
import { send } from '../../../test/support/http.js';
import { operationRows } from '../testing/rows.js';
import { A, B, useService } from '../testing/service.js';

const PROBLEMS = 'https://retrysafe.dev/examples/orders/problems/';
const CART = JSON.stringify({ items: [{ sku: 'WIDGET-1', qty: 1 }] });

describe.each(engines)('requests the service refuses rather than guess at, on $name', (factory) => {
  const t = useService(factory);

  it.each([
    ['a plain body labelled gzip', 'gzip', CART],
    ['a gzipped body', 'gzip', gzipSync(CART)],
    ['deflate', 'deflate', CART],
    ['br', 'br', CART],
  ])('refuses %s with 415, as it decodes no Content-Encoding', async (_name, encoding, body) => {
    const answer = await send('PUT', `${t.service.url}/v1/carts/c-encoded`, {
      headers: { Authorization: `Bearer ${A.token}`, 'Content-Type': 'application/json', 'Content-Encoding': encoding },
      body,
    });
    expect(answer.status).toBe(415);
    expect(answer.headers['content-type']).toBe('application/problem+json');
    expect((answer.json as { type: string }).type).toBe(`${PROBLEMS}unsupported-media-type`);
    expect(
      (await send('GET', `${t.service.url}/v1/carts/c-encoded`, { headers: { Authorization: `Bearer ${A.token}` } }))
        .status,
    ).toBe(404);
  });

  it('accepts Content-Encoding: identity, which is no encoding', async () => {
    const answer = await send('PUT', `${t.service.url}/v1/carts/c-identity`, {
      headers: {
        Authorization: `Bearer ${A.token}`,
        'Content-Type': 'application/json',
        'Content-Encoding': 'identity',
      },
      body: CART,
    });
    expect(answer.status).toBe(200);
  });

  it.each([
    ['two different tokens', [`Bearer ${A.token}`, `Bearer ${B.token}`]],
    ['the same token twice', [`Bearer ${A.token}`, `Bearer ${A.token}`]],
  ])('refuses two Authorization headers (%s) with 400, and stores nothing', async (_name, values) => {
    const answer = await send('POST', `${t.service.url}/v1/orders`, {
      headers: { 'Idempotency-Key': 'k-two-auth' },
      rawHeaders: values.map((value) => ['Authorization', value] as const),
      body: { cart_id: 'c1', cart_version: 1, delivery_option: 'standard' },
    });
    expect(answer.status).toBe(400);
    expect(answer.headers['content-type']).toBe('application/problem+json');
    expect((answer.json as { type: string }).type).toBe(`${PROBLEMS}request-invalid`);
    expect(await operationRows(t.engine.database, A.tenant, 'k-two-auth')).toEqual([]);
    expect(await operationRows(t.engine.database, B.tenant, 'k-two-auth')).toEqual([]);
  });
});
