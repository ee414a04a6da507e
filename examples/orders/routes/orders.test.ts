import { describe, expect, it } from 'vitest';
import { engines } from '../../../test/support/engines.js';
import { call, type HttpAnswer, json } from '../testing/http.js';
import { operationRows, orderRows } from '../testing/rows.js';
import { A, B, useService } from '../testing/service.js';

const PROBLEMS = 'https://retrysafe.dev/examples/orders/problems/';
const RETRYSAFE_PROBLEMS = 'https://retrysafe.dev/problems/';

describe.each(engines)('orders on $name', (factory) => {
  const t = useService(factory);

  const putCart = async (cartId: string, items: readonly { sku: string; qty: number }[], token: string = A.token) => {
    const answer = await call(t.service.url, 'PUT', `/v1/carts/${cartId}`, { token, json: { items } });
    expect(answer.status).toBe(200);
    return json(answer).cart_version as number;
  };
  /** `null` sends no Authorization header. */
  const order = (key: string | undefined, body: unknown, token: string | null = A.token) =>
    call(t.service.url, 'POST', '/v1/orders', {
      ...(token === null ? {} : { token }),
      ...(key === undefined ? {} : { key }),
      json: body,
    });
  const same = (a: HttpAnswer, b: HttpAnswer) => {
    expect(b.status).toBe(a.status);
    expect(b.body.equals(a.body)).toBe(true);
    expect(b.headers['content-type']).toBe(a.headers['content-type']);
    expect(b.headers.location).toBe(a.headers.location);
  };

  it('prices the cart on the server and creates the order', async () => {
    const version = await putCart('o-happy', [
      { sku: 'WIDGET-1', qty: 2 },
      { sku: 'GIZMO-3', qty: 1 },
    ]);
    const standard = await order('k-happy', { cart_id: 'o-happy', cart_version: version, delivery_option: 'standard' });
    expect(standard.status).toBe(201);
    const body = json(standard);
    expect(Object.keys(body)).toEqual([
      'id',
      'cart_id',
      'cart_version',
      'delivery_option',
      'total_cents',
      'created_at',
      'paid_at',
    ]);
    expect(body.paid_at).toBeNull();
    expect(body).toMatchObject({
      cart_id: 'o-happy',
      cart_version: 1,
      delivery_option: 'standard',
      total_cents: 2 * 1299 + 250,
    });
    expect(body.id).toMatch(/^ord_[A-Za-z0-9_-]{16}$/);
    expect(new Date(String(body.created_at)).toISOString()).toBe(body.created_at);
    expect(standard.headers.location).toBe(`/v1/orders/${String(body.id)}`);
    expect(standard.headers['idempotent-replayed']).toBeUndefined();
    expect(await orderRows(t.engine.database, A.tenant, 'o-happy')).toEqual([
      { id: body.id, cart_version: 1, total_cents: 2848 },
    ]);
    expect(await operationRows(t.engine.database, A.tenant, 'k-happy')).toEqual([
      { state: 'completed', response_status: 201 },
    ]);
    const { rows } = await t.engine.database.query<{ lines: unknown }>(
      'SELECT lines FROM orders WHERE tenant = $1 AND id = $2',
      [A.tenant, body.id],
    );
    expect(rows[0]?.lines).toEqual([
      { sku: 'GIZMO-3', qty: 1, unit_price_cents: 250 },
      { sku: 'WIDGET-1', qty: 2, unit_price_cents: 1299 },
    ]);
  });

  it('puts the cart given with the order in its transaction, and keeps one order per cart version', async () => {
    const items = [{ sku: 'WIDGET-1', qty: 1 }];
    const body = { cart_id: 'o-inline', cart_version: 1, items, delivery_option: 'standard' };
    const created = await order('k-inline', body);
    expect(created.status).toBe(201);
    expect(json(created)).toMatchObject({ cart_id: 'o-inline', cart_version: 1, total_cents: 1299 });
    const cart = await call(t.service.url, 'GET', '/v1/carts/o-inline', { token: A.token });
    expect(json(cart)).toEqual({ cart_id: 'o-inline', cart_version: 1, items });
    // The same items under another key leave the cart at its version: that version is ordered already.
    const again = await order('k-inline-2', body);
    expect(again.status).toBe(409);
    expect(json(again).type).toBe(`${PROBLEMS}order-exists`);
    const invalid = await order('k-inline-3', { ...body, cart_id: 'o-inline-bad', items: [{ sku: 'NOPE', qty: 1 }] });
    expect(invalid.status).toBe(422);
    expect(json(invalid).type).toBe(`${PROBLEMS}validation-failed`);
    expect(await operationRows(t.engine.database, A.tenant, 'k-inline-3')).toEqual([]);
  });

  it("refuses another user of the tenant the first user's key", async () => {
    const body = {
      cart_id: 'o-principal',
      cart_version: 1,
      items: [{ sku: 'GIZMO-3', qty: 1 }],
      delivery_option: 'standard',
    };
    expect((await order('k-principal', body)).status).toBe(201);
    const other = await order('k-principal', body, 'demo-a2');
    expect(other.status).toBe(403);
    expect(json(other).type).toBe(`${RETRYSAFE_PROBLEMS}key-of-another-principal`);
    expect((await order('k-principal', body)).headers['idempotent-replayed']).toBe('true');
  });

  it('publishes its idempotency specification, which a refusal links to', async () => {
    const missingKey = await order(undefined, { cart_id: 'o-spec', cart_version: 1, delivery_option: 'standard' });
    expect(missingKey.status).toBe(400);
    expect(missingKey.headers.link).toBe('</v1/idempotency>; rel="describedby"');
    const page = await call(t.service.url, 'GET', '/v1/idempotency');
    expect(page.status).toBe(200);
    expect(page.body.toString()).toContain('orders.create@1');
    const document = await call(t.service.url, 'GET', '/v1/idempotency/openapi.json');
    expect(document.status).toBe(200);
  });

  it('adds the express fee', async () => {
    const version = await putCart('o-express', [{ sku: 'GADGET-2', qty: 1 }]);
    const answer = await order('k-express', {
      cart_id: 'o-express',
      cart_version: version,
      delivery_option: 'express',
    });
    expect(answer.status).toBe(201);
    expect(json(answer).total_cents).toBe(4999 + 1500);
  });

  it('reads an order back, and hides it from another tenant', async () => {
    const version = await putCart('o-read', [{ sku: 'GIZMO-3', qty: 4 }]);
    const created = await order('k-read', { cart_id: 'o-read', cart_version: version, delivery_option: 'standard' });
    const location = created.headers.location ?? '';
    const read = await call(t.service.url, 'GET', location, { token: A.token });
    expect(read.status).toBe(200);
    expect(json(read)).toEqual(json(created));
    for (const [path, token] of [
      [location, B.token],
      ['/v1/orders/ord_doesnotexist0000', A.token],
    ] as const) {
      const missing = await call(t.service.url, 'GET', path, { token });
      expect(missing.status).toBe(404);
      expect(missing.headers['content-type']).toBe('application/problem+json');
      expect(json(missing).type).toBe(`${PROBLEMS}not-found`);
    }
    const anonymous = await call(t.service.url, 'GET', location);
    expect(anonymous.status).toBe(401);
    expect(json(anonymous).type).toBe(`${PROBLEMS}unauthenticated`);
  });

  it("lists the tenant's orders, optionally for one cart", async () => {
    const v1 = await putCart('o-list', [{ sku: 'WIDGET-1', qty: 1 }]);
    const first = json(await order('k-list-1', { cart_id: 'o-list', cart_version: v1, delivery_option: 'standard' }));
    const v2 = await putCart('o-list', [{ sku: 'WIDGET-1', qty: 2 }]);
    const second = json(await order('k-list-2', { cart_id: 'o-list', cart_version: v2, delivery_option: 'standard' }));
    const other = await putCart('o-list', [{ sku: 'WIDGET-1', qty: 9 }], B.token);
    await order('k-list-b', { cart_id: 'o-list', cart_version: other, delivery_option: 'standard' }, B.token);

    const forCart = await call(t.service.url, 'GET', '/v1/orders?cart_id=o-list', { token: A.token });
    expect(forCart.status).toBe(200);
    const listed = json(forCart).orders as { id: string }[];
    expect(listed.map((o) => o.id).sort()).toEqual([first.id, second.id].sort());
    expect(listed).toContainEqual(first);

    const all = json(await call(t.service.url, 'GET', '/v1/orders', { token: A.token })).orders as {
      id: string;
      cart_id: string;
    }[];
    expect(all.map((o) => o.id)).toEqual(expect.arrayContaining([first.id, second.id]));
    const { rows } = await t.engine.database.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM orders WHERE tenant = $1',
      [A.tenant],
    );
    expect(all).toHaveLength(rows[0]?.n ?? -1);

    const bad = await call(t.service.url, 'GET', '/v1/orders?cart_id=no%20spaces', { token: A.token });
    expect(bad.status).toBe(422);
    expect(json(bad).type).toBe(`${PROBLEMS}validation-failed`);
  });

  it('replays a retry byte for byte, with Idempotent-Replayed, and creates one order', async () => {
    const version = await putCart('o-retry', [{ sku: 'WIDGET-1', qty: 1 }]);
    const body = { cart_id: 'o-retry', cart_version: version, delivery_option: 'express' };
    const first = await order('k-retry', body);
    const retry = await order('k-retry', { delivery_option: 'express', cart_version: version, cart_id: 'o-retry' });
    expect(first.status).toBe(201);
    same(first, retry);
    expect(retry.headers['idempotent-replayed']).toBe('true');
    expect(await orderRows(t.engine.database, A.tenant, 'o-retry')).toHaveLength(1);
  });

  it('refuses the same key with another body with 422, and runs nothing', async () => {
    const version = await putCart('o-mismatch', [{ sku: 'WIDGET-1', qty: 1 }]);
    const first = await order('k-mismatch', {
      cart_id: 'o-mismatch',
      cart_version: version,
      delivery_option: 'standard',
    });
    expect(first.status).toBe(201);
    const reused = await order('k-mismatch', {
      cart_id: 'o-mismatch',
      cart_version: version,
      delivery_option: 'express',
    });
    expect(reused.status).toBe(422);
    expect(json(reused).type).toBe(`${RETRYSAFE_PROBLEMS}fingerprint-mismatch`);
    expect(await orderRows(t.engine.database, A.tenant, 'o-mismatch')).toHaveLength(1);
    expect(await operationRows(t.engine.database, A.tenant, 'k-mismatch')).toEqual([
      { state: 'completed', response_status: 201 },
    ]);
  });

  it('stores a stale cart_version as a 422 cart-changed outcome and replays it', async () => {
    await putCart('o-stale', [{ sku: 'WIDGET-1', qty: 1 }]);
    const current = await putCart('o-stale', [{ sku: 'WIDGET-1', qty: 2 }]);
    expect(current).toBe(2);
    const stale = await order('k-stale', { cart_id: 'o-stale', cart_version: 1, delivery_option: 'standard' });
    expect(stale.status).toBe(422);
    expect(stale.headers['content-type']).toBe('application/problem+json');
    expect(json(stale)).toMatchObject({ type: `${PROBLEMS}cart-changed`, status: 422, current_cart_version: 2 });
    expect(await operationRows(t.engine.database, A.tenant, 'k-stale')).toEqual([
      { state: 'failed', response_status: 422 },
    ]);
    // Putting the cart back at version 1's contents makes version 3, not 1: the retry still gets the stored answer.
    await putCart('o-stale', [{ sku: 'WIDGET-1', qty: 1 }]);
    const retry = await order('k-stale', { cart_id: 'o-stale', cart_version: 1, delivery_option: 'standard' });
    same(stale, retry);
    expect(retry.headers['idempotent-replayed']).toBe('true');
    expect(await orderRows(t.engine.database, A.tenant, 'o-stale')).toEqual([]);
  });

  it('stores an unknown cart as a 422 cart-not-found outcome', async () => {
    const first = await order('k-nocart', { cart_id: 'o-nothing', cart_version: 1, delivery_option: 'standard' });
    expect(first.status).toBe(422);
    expect(json(first).type).toBe(`${PROBLEMS}cart-not-found`);
    expect(await operationRows(t.engine.database, A.tenant, 'k-nocart')).toEqual([
      { state: 'failed', response_status: 422 },
    ]);
    // Creating the cart afterwards does not change what this key did.
    await putCart('o-nothing', [{ sku: 'GIZMO-3', qty: 1 }]);
    const retry = await order('k-nocart', { cart_id: 'o-nothing', cart_version: 1, delivery_option: 'standard' });
    same(first, retry);
    expect(await orderRows(t.engine.database, A.tenant, 'o-nothing')).toEqual([]);
  });

  it('answers invalid input without storing it, so the key can then be used with valid input', async () => {
    const version = await putCart('o-invalid', [{ sku: 'WIDGET-1', qty: 1 }]);
    const cases: readonly [unknown, number, string][] = [
      [{ cart_id: 'o-invalid', cart_version: version, delivery_option: 'drone' }, 422, 'delivery_option'],
      [{ cart_id: 'o-invalid', delivery_option: 'standard' }, 422, 'cart_version'],
      [{ cart_id: 'o-invalid', cart_version: '1', delivery_option: 'standard' }, 422, 'cart_version'],
      [{ cart_id: '', cart_version: version, delivery_option: 'standard' }, 422, 'cart_id'],
      [['o-invalid'], 400, ''],
      ['o-invalid', 400, ''],
    ];
    for (const [body, status, field] of cases) {
      const answer = await order('k-invalid', body);
      expect(answer.status).toBe(status);
      expect(answer.headers['content-type']).toBe('application/problem+json');
      if (field !== '') expect(json(answer).errors).toEqual([expect.objectContaining({ field })]);
      expect(await operationRows(t.engine.database, A.tenant, 'k-invalid')).toEqual([]);
    }
    const valid = await order('k-invalid', {
      cart_id: 'o-invalid',
      cart_version: version,
      delivery_option: 'standard',
    });
    expect(valid.status).toBe(201);
    expect(await orderRows(t.engine.database, A.tenant, 'o-invalid')).toHaveLength(1);
  });

  it('needs a key and a known caller, and stores nothing without them', async () => {
    const version = await putCart('o-gate', [{ sku: 'WIDGET-1', qty: 1 }]);
    const body = { cart_id: 'o-gate', cart_version: version, delivery_option: 'standard' };
    const keyless = await order(undefined, body);
    expect(keyless.status).toBe(400);
    expect(json(keyless).type).toBe(`${RETRYSAFE_PROBLEMS}idempotency-key-missing`);
    for (const token of [null, 'not-a-token']) {
      const anonymous = await order('k-gate', body, token);
      expect(anonymous.status).toBe(401);
      expect(anonymous.headers['content-type']).toBe('application/problem+json');
      expect(json(anonymous).type).toBe(`${RETRYSAFE_PROBLEMS}unauthenticated`);
    }
    const { rows } = await t.engine.database.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM retrysafe_operations WHERE key = 'k-gate'",
    );
    expect(rows[0]?.n).toBe(0);
    expect(await orderRows(t.engine.database, A.tenant, 'o-gate')).toEqual([]);
  });

  it('makes one order per cart version whatever the keys: another key gets 409 order-exists', async () => {
    const version = await putCart('o-twokeys', [{ sku: 'GADGET-2', qty: 2 }]);
    const body = { cart_id: 'o-twokeys', cart_version: version, delivery_option: 'standard' };
    const first = await order('k-two-1', body);
    expect(first.status).toBe(201);
    const second = await order('k-two-2', body);
    expect(second.status).toBe(409);
    expect(second.headers['content-type']).toBe('application/problem+json');
    expect(second.headers.location).toBe(first.headers.location);
    expect(json(second)).toMatchObject({ type: `${PROBLEMS}order-exists`, order_id: json(first).id });
    // A 409 is transient in retrysafe's policy: not stored, and a retry answers the same.
    expect(await operationRows(t.engine.database, A.tenant, 'k-two-2')).toEqual([]);
    same(second, await order('k-two-2', body));
    expect(await orderRows(t.engine.database, A.tenant, 'o-twokeys')).toHaveLength(1);
  });

  it("gives another tenant with the same key its own operation, never the first one's answer", async () => {
    const versionA = await putCart('o-tenant', [{ sku: 'WIDGET-1', qty: 1 }], A.token);
    const versionB = await putCart('o-tenant', [{ sku: 'GADGET-2', qty: 3 }], B.token);
    const body = { cart_id: 'o-tenant', cart_version: versionA, delivery_option: 'standard' };
    expect(versionB).toBe(versionA);
    const a = await order('k-tenant', body, A.token);
    const b = await order('k-tenant', body, B.token);
    expect(a.status).toBe(201);
    expect(b.status).toBe(201);
    expect(b.headers['idempotent-replayed']).toBeUndefined();
    expect(json(b).id).not.toBe(json(a).id);
    expect(json(a).total_cents).toBe(1299);
    expect(json(b).total_cents).toBe(3 * 4999);
    expect(await orderRows(t.engine.database, A.tenant, 'o-tenant')).toEqual([
      { id: json(a).id, cart_version: 1, total_cents: 1299 },
    ]);
    expect(await orderRows(t.engine.database, B.tenant, 'o-tenant')).toEqual([
      { id: json(b).id, cart_version: 1, total_cents: 14997 },
    ]);
    same(a, await order('k-tenant', body, A.token));
    same(b, await order('k-tenant', body, B.token));
  });
});
