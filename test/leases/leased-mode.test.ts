import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { providerAdmin } from '../../examples/provider/client.js';
import { type Provider, startProvider } from '../../examples/provider/provider.js';
import { leased } from '../../src/adapters/fetch.js';
import { idempotency, type Idempotency } from '../../src/core/idempotency.js';
import { downstreamKey } from '../../src/leases/downstream-key.js';
import { RecoveryWorker } from '../../src/leases/recovery-worker.js';
import { resolveOperation } from '../../src/leases/resolve.js';
import { postgresStore } from '../../src/postgres/index.js';
import type { SqlClient } from '../../src/store/sql-client.js';
import { type Engine, engines } from '../support/engines.js';
import { type Calls, PAYMENTS_TABLE, paymentRoute } from './payment-route.js';

describe.each(engines)('leased mode on $name', (factory) => {
  let engine: Engine;
  let provider: Provider;
  let admin: ReturnType<typeof providerAdmin>;
  let config: Idempotency<SqlClient>;
  let calls: Calls;
  let pay: (request: Request, context: undefined) => Promise<Response>;

  beforeAll(async () => {
    engine = await factory.open();
    await engine.database.query(PAYMENTS_TABLE);
    provider = await startProvider();
    admin = providerAdmin(provider.url);
  });
  afterAll(async () => {
    await provider.close();
    await engine.close();
  });
  afterEach(() => admin.control({ mode: 'reset' }));

  function setUp(options: { leaseSeconds?: number; maxAttempts?: number } = {}): void {
    config = idempotency({ store: postgresStore(engine.database), ...options });
    calls = { charge: 0, reconcile: 0, record: 0 };
    pay = leased(config, paymentRoute(provider.url, calls));
  }

  const request = (key: string, body: unknown, tenant = 'tenant-a'): Request =>
    new Request('http://service.test/payments', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'idempotency-key': key, 'x-tenant': tenant },
      body: JSON.stringify(body),
    });
  const state = async (key: string, tenant = 'tenant-a') =>
    (await engine.database.query<{ state: string; attempt: number; reason: string | null }>(
      "SELECT state, attempt, reason FROM retrysafe_operations WHERE tenant = $1 AND operation = 'payments.create@1' AND key = $2",
      [tenant, key],
    )).rows[0];
  const payments = async (order: string) => (await engine.database.query<{ n: number }>('SELECT count(*)::int AS n FROM payments WHERE order_id = $1', [order])).rows[0]?.n;
  const chargeKey = (key: string, tenant = 'tenant-a') => downstreamKey({ tenant, operation: 'payments.create@1', key }, 'charge');
  const expireLease = (key: string) => engine.database.query("UPDATE retrysafe_operations SET lease_expires_at = now() - interval '1 second' WHERE key = $1", [key]);

  it('charges once, records the payment, and replays the stored answer', async () => {
    setUp();
    const key = randomUUID();
    const body = { order: `ord-${key}`, amount: 1299 };
    const first = await pay(request(key, body), undefined);
    expect(first.status).toBe(201);
    const firstBody = await first.text();
    const again = await pay(request(key, body), undefined);
    expect(again.status).toBe(201);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(await again.text()).toBe(firstBody);
    expect(await admin.count(chargeKey(key))).toBe(1);
    expect(await payments(body.order)).toBe(1);
    expect(calls).toEqual({ charge: 1, reconcile: 0, record: 1 });
    expect((await state(key))?.state).toBe('completed');
  });

  it('answers a duplicate 409 with the lease time left, and a different body 422, while the first runs', async () => {
    setUp({ leaseSeconds: 20 });
    const key = randomUUID();
    const body = { order: `ord-${key}`, amount: 500 };
    await admin.control({ mode: 'delay', ms: 1500, reference: body.order });
    const first = pay(request(key, body), undefined);
    await waitFor(async () => (await state(key))?.state === 'in_progress');
    const duplicate = await pay(request(key, body), undefined);
    expect(duplicate.status).toBe(409);
    expect(Number(duplicate.headers.get('retry-after'))).toBeGreaterThan(1);
    const mismatch = await pay(request(key, { ...body, amount: 501 }), undefined);
    expect(mismatch.status).toBe(422);
    expect((await first).status).toBe(201);
    expect(await admin.count(chargeKey(key))).toBe(1);
  });

  it('keeps tenants apart: the same key elsewhere is another operation with another downstream key', async () => {
    setUp();
    const key = randomUUID();
    expect(chargeKey(key, 'tenant-a')).not.toBe(chargeKey(key, 'tenant-b'));
    const a = await pay(request(key, { order: `ord-a-${key}`, amount: 100 }, 'tenant-a'), undefined);
    const b = await pay(request(key, { order: `ord-b-${key}`, amount: 100 }, 'tenant-b'), undefined);
    expect([a.status, b.status]).toEqual([201, 201]);
    expect(b.headers.get('idempotent-replayed')).toBeNull();
    expect(await admin.count(chargeKey(key, 'tenant-a'))).toBe(1);
    expect(await admin.count(chargeKey(key, 'tenant-b'))).toBe(1);
  });

  it('reconciles at once when the provider charged and then dropped the connection', async () => {
    setUp();
    const key = randomUUID();
    const body = { order: `ord-${key}`, amount: 700 };
    await admin.control({ mode: 'charge-then-drop', reference: body.order });
    const answer = await pay(request(key, body), undefined);
    expect(answer.status).toBe(201);
    expect(calls.reconcile).toBe(1);
    expect(await admin.count(chargeKey(key))).toBe(1);
    expect(await payments(body.order)).toBe(1);
  });

  it('drops an operation whose handler failed before any step, so the retry starts afresh', async () => {
    setUp();
    const key = randomUUID();
    const body = { order: `ord-${key}`, amount: -1 };
    const failing = leased(config, {
      ...paymentRoute(provider.url),
      handler: () => Promise.reject(new Error('bad input slipped through')),
    });
    await expect(failing(request(key, body), undefined)).rejects.toThrow('bad input slipped through');
    expect(await state(key)).toBeUndefined();
  });

  it('resumes after the provider failed: the retry reconciles, charges once and finishes', async () => {
    setUp();
    const key = randomUUID();
    const body = { order: `ord-${key}`, amount: 900 };
    await admin.control({ mode: 'fail-before-charge', reference: body.order });
    await expect(pay(request(key, body), undefined)).rejects.toThrow('provider unavailable');
    expect((await state(key))?.state).toBe('in_progress');
    const retry = await pay(request(key, body), undefined);
    expect(retry.status).toBe(201);
    expect((await state(key))?.attempt).toBe(2);
    expect(await admin.count(chargeKey(key))).toBe(1);
    expect(await payments(body.order)).toBe(1);
  });

  it('fences a worker that lost its lease: the recoverer finishes, the stale worker writes nothing and the provider refuses its late call', async () => {
    setUp({ leaseSeconds: 30 });
    const key = randomUUID();
    const body = { order: `ord-${key}`, amount: 1500 };
    await admin.control({ mode: 'delay', ms: 2500, reference: body.order, times: 1 });
    const before = (await admin.stats()).requests;
    const stale = pay(request(key, body), undefined);
    // The stale worker's call is inside the provider, held up, before its lease is taken away.
    await waitFor(async () => (await admin.stats()).requests > before);
    await expireLease(key);
    const recovery = new RecoveryWorker({ config, operations: [paymentRoute(provider.url)] });
    const report = await recovery.runOnce();
    expect(report).toMatchObject({ examined: 1, finished: 1 });
    const staleAnswer = await stale;
    expect(staleAnswer.status).toBe(409);
    expect(await admin.count(chargeKey(key))).toBe(1);
    expect(await payments(body.order)).toBe(1);
    const replay = await pay(request(key, body), undefined);
    expect(replay.status).toBe(201);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
  });

  it('lets exactly one of two racing recovery workers take an expired lease', async () => {
    setUp({ leaseSeconds: 30 });
    const key = randomUUID();
    const body = { order: `ord-${key}`, amount: 300 };
    await admin.control({ mode: 'fail-before-charge', reference: body.order });
    await expect(pay(request(key, body), undefined)).rejects.toThrow();
    await expireLease(key);
    const workers = [0, 1].map(() => new RecoveryWorker({ config, operations: [paymentRoute(provider.url)] }));
    const reports = await Promise.all(workers.map((worker) => worker.runOnce()));
    expect(reports.reduce((n, r) => n + r.finished, 0)).toBe(1);
    expect(await admin.count(chargeKey(key))).toBe(1);
    expect(await payments(body.order)).toBe(1);
    expect((await state(key))?.state).toBe('completed');
  });

  it('is not crowded out by expired leases of operations it does not know', async () => {
    setUp({ leaseSeconds: 30 });
    await engine.database.query(
      `INSERT INTO retrysafe_operations (tenant, operation, key, fingerprint, state, owner_token, lease_expires_at, mode)
       SELECT 'tenant-z', 'unknown.op@1', 'k' || n, decode(repeat('00', 32), 'hex'), 'in_progress', gen_random_uuid(), now() - interval '1 hour', 'leased'
       FROM generate_series(1, 25) AS n`,
    );
    const key = randomUUID();
    const body = { order: `ord-${key}`, amount: 350 };
    await admin.control({ mode: 'fail-before-charge', reference: body.order });
    await expect(pay(request(key, body), undefined)).rejects.toThrow();
    await expireLease(key);
    const report = await new RecoveryWorker({ config, operations: [paymentRoute(provider.url)], batchSize: 20 }).runOnce();
    expect(report).toMatchObject({ examined: 1, finished: 1 });
    expect((await state(key))?.state).toBe('completed');
    await engine.database.query("DELETE FROM retrysafe_operations WHERE operation = 'unknown.op@1'");
  });

  it('marks the operation unknown after the last attempt, refuses to run it again, and lets an operator resolve it', async () => {
    setUp({ maxAttempts: 2 });
    const key = randomUUID();
    const body = { order: `ord-${key}`, amount: 400 };
    await admin.control({ mode: 'fail-before-charge', reference: body.order, times: 5 });
    await expect(pay(request(key, body), undefined)).rejects.toThrow();
    const last = await pay(request(key, body), undefined);
    expect(last.status).toBe(409);
    expect(((await last.json()) as { type: string }).type).toMatch(/outcome-unknown$/);
    expect((await state(key))?.state).toBe('unknown');
    const again = await pay(request(key, body), undefined);
    expect(((await again.json()) as { type: string }).type).toMatch(/outcome-unknown$/);
    expect(await admin.count(chargeKey(key))).toBe(0);
    const identity = { tenant: 'tenant-a', operation: 'payments.create@1', key };
    const resolved = await resolveOperation(config, identity, { state: 'failed', reply: { status: 402, body: { error: 'not charged' } }, reason: 'checked with the provider: no charge' });
    expect(resolved).toEqual({ resolved: true });
    const afterResolve = await pay(request(key, body), undefined);
    expect(afterResolve.status).toBe(402);
    expect(afterResolve.headers.get('idempotent-replayed')).toBe('true');
    expect((await state(key))?.reason).toBe('checked with the provider: no charge');
    expect(await resolveOperation(config, identity, { state: 'completed', reply: { status: 200 }, reason: 'twice' })).toEqual({ resolved: false, why: 'not-unknown' });
  });
});

async function waitFor(condition: () => Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}
