import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { providerAdmin } from '../../examples/provider/client.js';
import { type Provider, startProvider } from '../../examples/provider/provider.js';
import { idempotency } from '../../src/modes/idempotency.js';
import { downstreamKey } from '../../src/modes/downstream-key.js';
import { postgresStore } from '../../src/postgres/index.js';
import { useEngine } from '../adapters/harness.js';
import { engines } from '../support/engines.js';
import { send } from '../support/http.js';
import type { Listening } from '../support/listen.js';
import { type Calls, noCalls, PAYMENTS_TABLE, paymentRoute } from './payment-route.js';
import { paymentServers } from './payment-servers.js';
import { waitFor } from '../support/wait-for.js';

describe.each(engines)('leased mode through the server adapters on $name', (factory) => {
  const ref = useEngine(factory);
  let provider: Provider;
  let admin: ReturnType<typeof providerAdmin>;
  beforeAll(async () => {
    await ref.engine.database.query(PAYMENTS_TABLE);
    provider = await startProvider();
    admin = providerAdmin(provider.url);
  });
  afterAll(() => provider.close());
  afterEach(() => admin.control({ mode: 'reset' }));

  describe.each(paymentServers)('through $name', (server) => {
    let calls: Calls;
    let app: Listening;
    beforeAll(async () => {
      calls = noCalls();
      const { operation, handler } = paymentRoute(provider.url, calls);
      app = await server.start(idempotency({ store: postgresStore(ref.engine.database), leaseSeconds: 20 }), {
        operation,
        handler,
      });
    });
    afterAll(() => app.close());

    const pay = (key: string, body: unknown) =>
      send('POST', `${app.url}/payments`, { headers: { 'idempotency-key': key, 'x-tenant': 'tenant-a' }, body });
    const chargeKey = (key: string) =>
      downstreamKey({ tenant: 'tenant-a', operation: 'payments.create@1', key }, 'charge');
    const payments = async (order: string) =>
      (
        await ref.engine.database.query<{ n: number }>('SELECT count(*)::int AS n FROM payments WHERE order_id = $1', [
          order,
        ])
      ).rows[0]?.n;
    const state = async (key: string) =>
      (
        await ref.engine.database.query<{ state: string }>(
          "SELECT state FROM retrysafe_operations WHERE tenant = 'tenant-a' AND key = $1",
          [key],
        )
      ).rows[0]?.state;

    it('charges once, records the payment once, and replays the stored answer', async () => {
      const key = randomUUID();
      const body = { order: `ord-${key}`, amount: 1299 };
      const before = { ...calls };
      const first = await pay(key, body);
      expect(first.status).toBe(201);
      expect(first.headers.location).toBe(`/payments/${(first.json as { charge: string }).charge}`);
      const again = await pay(key, body);
      expect(again.status).toBe(201);
      expect(again.headers['idempotent-replayed']).toBe('true');
      expect(again.bodyBytes.toString('latin1')).toBe(first.bodyBytes.toString('latin1'));
      expect(await admin.count(chargeKey(key))).toBe(1);
      expect(await payments(body.order)).toBe(1);
      expect({ charge: calls.charge - before.charge, record: calls.record - before.record }).toEqual({
        charge: 1,
        record: 1,
      });
      expect(await state(key)).toBe('completed');
    });

    it('answers a duplicate 409 and another body 422 while the first runs, then charges once', async () => {
      const key = randomUUID();
      const body = { order: `ord-${key}`, amount: 500 };
      await admin.control({ mode: 'hold', reference: body.order });
      const first = pay(key, body);
      await waitFor(async () => (await admin.stats()).held === 1, { what: 'the first attempt’s charge to be held' });
      const duplicate = await pay(key, body);
      expect(duplicate.status).toBe(409);
      expect(Number(duplicate.headers['retry-after'])).toBeGreaterThan(1);
      expect((await pay(key, { ...body, amount: 501 })).status).toBe(422);
      await admin.control({ mode: 'release' });
      expect((await first).status).toBe(201);
      expect(await admin.count(chargeKey(key))).toBe(1);
      expect(await payments(body.order)).toBe(1);
    });

    it('refuses a request without a tenant 401 and charges nothing', async () => {
      const key = randomUUID();
      const res = await send('POST', `${app.url}/payments`, {
        headers: { 'idempotency-key': key },
        body: { order: `ord-${key}`, amount: 1 },
      });
      expect(res.status).toBe(401);
      expect(await admin.count(chargeKey(key))).toBe(0);
      expect(await state(key)).toBeUndefined();
    });
  });
});
