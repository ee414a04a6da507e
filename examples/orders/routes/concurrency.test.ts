import { describe, expect, it } from 'vitest';
import { engines } from '../../../test/support/engines.js';
import { call, type HttpAnswer, json } from '../testing/http.js';
import { operationRows, orderRows } from '../testing/rows.js';
import { A, useService } from '../testing/service.js';

const DUPLICATES = 50;

describe.each(engines)('concurrent checkouts on $name', (factory) => {
  // A slow shared machine must not turn a queue of duplicates into 503s: this test is about outcomes, not speed.
  const t = useService(factory, { idempotency: { storeTimeoutMs: 60_000 } });

  const putCart = async (cartId: string) => {
    const answer = await call(t.service.url, 'PUT', `/v1/carts/${cartId}`, {
      token: A.token,
      json: { items: [{ sku: 'WIDGET-1', qty: 3 }] },
    });
    return json(answer).cart_version as number;
  };
  const order = (key: string, body: unknown) =>
    call(t.service.url, 'POST', '/v1/orders', { token: A.token, key, json: body });

  it(
    `${DUPLICATES} requests with one key, each on its own connection, make one order and all get its answer or 409`,
    { timeout: 120_000 },
    async () => {
      const version = await putCart('c-race');
      const body = { cart_id: 'c-race', cart_version: version, delivery_option: 'express' };
      const answers = await Promise.all(Array.from({ length: DUPLICATES }, () => order('k-race', body)));

      const stored = await orderRows(t.engine.database, A.tenant, 'c-race');
      expect(stored).toHaveLength(1);
      expect(await operationRows(t.engine.database, A.tenant, 'k-race')).toEqual([
        { state: 'completed', response_status: 201 },
      ]);

      const created = answers.filter((a) => a.status === 201);
      const originals = created.filter((a) => a.headers['idempotent-replayed'] === undefined);
      expect(originals).toHaveLength(1);
      const [original] = originals as [HttpAnswer];
      expect(json(original).id).toBe(stored[0]?.id);
      for (const answer of answers) {
        if (answer.status === 201) {
          expect(answer.body.equals(original.body)).toBe(true);
          expect(answer.headers.location).toBe(original.headers.location);
        } else {
          expect(answer.status).toBe(409);
          expect(answer.headers['retry-after']).toMatch(/^\d+$/);
          expect(json(answer).type).toBe('https://retrysafe.dev/problems/operation-in-progress');
        }
      }
    },
  );

  it(
    'different keys racing for one cart version make one order; the others get 409 order-exists pointing at it',
    { timeout: 120_000 },
    async () => {
      const version = await putCart('c-keys');
      const body = { cart_id: 'c-keys', cart_version: version, delivery_option: 'standard' };
      const keys = Array.from({ length: 10 }, (_, i) => `k-keys-${i}`);
      const answers = await Promise.all(keys.map((key) => order(key, body)));

      const stored = await orderRows(t.engine.database, A.tenant, 'c-keys');
      expect(stored).toHaveLength(1);
      const location = `/v1/orders/${stored[0]?.id ?? ''}`;
      expect(answers.filter((a) => a.status === 201)).toHaveLength(1);
      for (const answer of answers) {
        expect(answer.headers.location).toBe(location);
        if (answer.status !== 201) {
          expect(answer.status).toBe(409);
          expect(json(answer).type).toBe('https://retrysafe.dev/examples/orders/problems/order-exists');
        }
      }
      const { rows } = await t.engine.database.query<{ key: string }>(
        "SELECT key FROM retrysafe_operations WHERE tenant = $1 AND key LIKE 'k-keys-%'",
        [A.tenant],
      );
      expect(rows).toEqual([{ key: keys[answers.findIndex((a) => a.status === 201)] }]);
    },
  );
});
