import { describe, expect, it } from 'vitest';
import { engines } from '../../../test/support/engines.js';
import { call, json } from '../testing/http.js';
import { A, B, useService } from '../testing/service.js';

describe.each(engines)('carts on $name', (factory) => {
  const t = useService(factory);

  const put = (cartId: string, body: unknown, token: string = A.token) =>
    call(t.service.url, 'PUT', `/v1/carts/${cartId}`, { token, json: body });
  const cartRows = async (tenant: string, cartId: string) =>
    (
      await t.engine.database.query<{ cart_version: number }>(
        'SELECT cart_version FROM carts WHERE tenant = $1 AND cart_id = $2',
        [tenant, cartId],
      )
    ).rows;

  it('creates a cart at version 1 and reads it back', async () => {
    const answer = await put('c-create', { items: [{ sku: 'WIDGET-1', qty: 2 }] });
    expect(answer.status).toBe(200);
    expect(json(answer)).toEqual({ cart_id: 'c-create', cart_version: 1, items: [{ sku: 'WIDGET-1', qty: 2 }] });
    const read = await call(t.service.url, 'GET', '/v1/carts/c-create', { token: A.token });
    expect(read.status).toBe(200);
    expect(json(read)).toEqual(json(answer));
    expect(await cartRows(A.tenant, 'c-create')).toEqual([{ cart_version: 1 }]);
  });

  it('keeps the version when the same items are sent again, in any order', async () => {
    await put('c-same', {
      items: [
        { sku: 'WIDGET-1', qty: 2 },
        { sku: 'GIZMO-3', qty: 1 },
      ],
    });
    const again = await put('c-same', {
      items: [
        { sku: 'GIZMO-3', qty: 1 },
        { sku: 'WIDGET-1', qty: 2 },
      ],
    });
    expect(again.status).toBe(200);
    expect(json(again).cart_version).toBe(1);
    expect(await cartRows(A.tenant, 'c-same')).toEqual([{ cart_version: 1 }]);
  });

  it('bumps the version when the items change', async () => {
    await put('c-bump', { items: [{ sku: 'WIDGET-1', qty: 2 }] });
    const changed = await put('c-bump', { items: [{ sku: 'WIDGET-1', qty: 3 }] });
    expect(json(changed)).toMatchObject({ cart_version: 2, items: [{ sku: 'WIDGET-1', qty: 3 }] });
    expect(await cartRows(A.tenant, 'c-bump')).toEqual([{ cart_version: 2 }]);
  });

  it('keeps carts per tenant', async () => {
    await put('c-shared', { items: [{ sku: 'WIDGET-1', qty: 1 }] }, A.token);
    await put('c-shared', { items: [{ sku: 'WIDGET-1', qty: 1 }] }, A.token);
    const b = await put('c-shared', { items: [{ sku: 'GADGET-2', qty: 5 }] }, B.token);
    expect(json(b)).toMatchObject({ cart_version: 1, items: [{ sku: 'GADGET-2', qty: 5 }] });
    const aRead = await call(t.service.url, 'GET', '/v1/carts/c-shared', { token: A.token });
    expect(json(aRead)).toMatchObject({ cart_version: 1, items: [{ sku: 'WIDGET-1', qty: 1 }] });
    expect(await cartRows(B.tenant, 'c-shared')).toEqual([{ cart_version: 1 }]);
  });

  it.each([
    ['an unknown SKU', { items: [{ sku: 'NOPE-9', qty: 1 }] }, 'items[0].sku'],
    ['a quantity of 0', { items: [{ sku: 'WIDGET-1', qty: 0 }] }, 'items[0].qty'],
    ['a quantity over 100', { items: [{ sku: 'WIDGET-1', qty: 101 }] }, 'items[0].qty'],
    ['a fractional quantity', { items: [{ sku: 'WIDGET-1', qty: 1.5 }] }, 'items[0].qty'],
    ['a quantity as a string', { items: [{ sku: 'WIDGET-1', qty: '2' }] }, 'items[0].qty'],
    [
      'a repeated SKU',
      {
        items: [
          { sku: 'WIDGET-1', qty: 1 },
          { sku: 'WIDGET-1', qty: 1 },
        ],
      },
      'items[1].sku',
    ],
    ['no items', { items: [] }, 'items'],
    ['items that are not an array', { items: 'WIDGET-1' }, 'items'],
  ])('refuses %s with 422 and stores nothing', async (_name, body, field) => {
    const answer = await put('c-invalid', body);
    expect(answer.status).toBe(422);
    expect(answer.headers['content-type']).toBe('application/problem+json');
    const problem = json(answer);
    expect(problem.type).toBe('https://retrysafe.dev/examples/orders/problems/validation-failed');
    expect(problem.errors).toEqual(expect.arrayContaining([expect.objectContaining({ field })]));
    expect(await cartRows(A.tenant, 'c-invalid')).toEqual([]);
  });

  it('refuses a cart id that is too long or has other characters', async () => {
    for (const cartId of ['x'.repeat(65), 'a.b', 'caf%C3%A9']) {
      const answer = await put(cartId, { items: [{ sku: 'WIDGET-1', qty: 1 }] });
      expect(answer.status).toBe(422);
      expect(json(answer).errors).toEqual([expect.objectContaining({ field: 'cart_id' })]);
    }
    const { rows } = await t.engine.database.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM carts WHERE cart_id LIKE 'x%' OR cart_id LIKE 'a.%'",
    );
    expect(rows[0]?.n).toBe(0);
  });

  it('refuses a body that is not a JSON object with 400, and bad JSON with 400', async () => {
    const array = await put('c-bad', [{ sku: 'WIDGET-1', qty: 1 }]);
    expect(array.status).toBe(400);
    expect(json(array).type).toBe('https://retrysafe.dev/examples/orders/problems/body-invalid');
    const broken = await call(t.service.url, 'PUT', '/v1/carts/c-bad', {
      token: A.token,
      raw: '{"items": [',
      contentType: 'application/json',
    });
    expect(broken.status).toBe(400);
    expect(broken.headers['content-type']).toBe('application/problem+json');
    expect(json(broken).type).toBe('https://retrysafe.dev/examples/orders/problems/body-invalid');
    expect(await cartRows(A.tenant, 'c-bad')).toEqual([]);
  });

  it('answers 401 without a known token and stores nothing', async () => {
    for (const token of [undefined, 'wrong']) {
      const answer = await call(t.service.url, 'PUT', '/v1/carts/c-anon', {
        ...(token === undefined ? {} : { token }),
        json: { items: [{ sku: 'WIDGET-1', qty: 1 }] },
      });
      expect(answer.status).toBe(401);
      expect(answer.headers['www-authenticate']).toBe('Bearer');
      expect(json(answer).type).toBe('https://retrysafe.dev/examples/orders/problems/unauthenticated');
    }
    const { rows } = await t.engine.database.query("SELECT 1 FROM carts WHERE cart_id = 'c-anon'");
    expect(rows).toEqual([]);
  });

  it("answers 404 for an unknown cart and for another tenant's cart", async () => {
    await put('c-private', { items: [{ sku: 'WIDGET-1', qty: 1 }] }, A.token);
    for (const [cartId, token] of [
      ['c-none', A.token],
      ['c-private', B.token],
    ] as const) {
      const answer = await call(t.service.url, 'GET', `/v1/carts/${cartId}`, { token });
      expect(answer.status).toBe(404);
      expect(json(answer).type).toBe('https://retrysafe.dev/examples/orders/problems/not-found');
    }
  });
});
