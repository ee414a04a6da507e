import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { RecoveryWorker } from '../../src/leases/recovery-worker.js';
import { resolveOperation } from '../../src/leases/resolve.js';
import { engines } from '../support/engines.js';
import { useLeasedHarness } from './harness.js';
import { paymentRoute } from './payment-route.js';
import { waitFor } from '../support/wait-for.js';

describe.each(engines)('leased mode on $name', (factory) => {
  const service = useLeasedHarness(factory);
  const { setUp, state, payments, chargeKey, expireLease } = service;
  const pay = (key: string, body: unknown, tenant?: string) => service.pay(key, body, tenant);
  const admin = {
    control: (...args: Parameters<typeof service.admin.control>) => service.admin.control(...args),
    count: (key: string) => service.admin.count(key),
    stats: () => service.admin.stats(),
  };

  it('charges once, records the payment, and replays the stored answer', async () => {
    setUp();
    const key = randomUUID();
    const body = { order: `ord-${key}`, amount: 1299 };
    const first = await pay(key, body);
    expect(first.status).toBe(201);
    const firstBody = await first.text();
    const again = await pay(key, body);
    expect(again.status).toBe(201);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(await again.text()).toBe(firstBody);
    expect(await admin.count(chargeKey(key))).toBe(1);
    expect(await payments(body.order)).toBe(1);
    expect(service.calls).toEqual({ charge: 1, reconcile: 0, record: 1, staleRefused: 0 });
    expect((await state(key))?.state).toBe('completed');
  });

  it('answers a duplicate 409 with the lease time left, and a different body 422, while the first runs', async () => {
    setUp({ leaseSeconds: 20 });
    const key = randomUUID();
    const body = { order: `ord-${key}`, amount: 500 };
    await admin.control({ mode: 'hold', reference: body.order });
    const first = pay(key, body);
    await waitFor(async () => (await admin.stats()).held === 1, { what: 'the first attempt’s charge to be held' });
    const duplicate = await pay(key, body);
    expect(duplicate.status).toBe(409);
    expect(Number(duplicate.headers.get('retry-after'))).toBeGreaterThan(1);
    const mismatch = await pay(key, { ...body, amount: 501 });
    expect(mismatch.status).toBe(422);
    await admin.control({ mode: 'release' });
    expect((await first).status).toBe(201);
    expect(await admin.count(chargeKey(key))).toBe(1);
  });

  it('keeps tenants apart: the same key elsewhere is another operation with another downstream key', async () => {
    setUp();
    const key = randomUUID();
    expect(chargeKey(key, 'tenant-a')).not.toBe(chargeKey(key, 'tenant-b'));
    const a = await pay(key, { order: `ord-a-${key}`, amount: 100 }, 'tenant-a');
    const b = await pay(key, { order: `ord-b-${key}`, amount: 100 }, 'tenant-b');
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
    const answer = await pay(key, body);
    expect(answer.status).toBe(201);
    expect(service.calls.reconcile).toBe(1);
    expect(await admin.count(chargeKey(key))).toBe(1);
    expect(await payments(body.order)).toBe(1);
  });

  it('drops an operation whose handler failed before any step, so the retry starts afresh', async () => {
    setUp(
      {},
      { ...paymentRoute(service.providerUrl), handler: () => Promise.reject(new Error('bad input slipped through')) },
    );
    const key = randomUUID();
    const body = { order: `ord-${key}`, amount: -1 };
    await expect(pay(key, body)).rejects.toThrow('bad input slipped through');
    expect(await state(key)).toBeUndefined();
  });

  it('resumes after the provider failed: the retry reconciles, charges once and finishes', async () => {
    setUp();
    const key = randomUUID();
    const body = { order: `ord-${key}`, amount: 900 };
    await admin.control({ mode: 'fail-before-charge', reference: body.order });
    await expect(pay(key, body)).rejects.toThrow('provider unavailable');
    expect((await state(key))?.state).toBe('in_progress');
    // The retry comes once the backoff after the failed attempt has passed.
    await expireLease(key);
    const retry = await pay(key, body);
    expect(retry.status).toBe(201);
    expect((await state(key))?.attempt).toBe(2);
    expect(await admin.count(chargeKey(key))).toBe(1);
    expect(await payments(body.order)).toBe(1);
  });

  it('fences a worker that lost its lease: the recoverer finishes, the stale worker writes nothing and the provider refuses its late call', async () => {
    setUp({ leaseSeconds: 30 });
    const key = randomUUID();
    const body = { order: `ord-${key}`, amount: 1500 };
    await admin.control({ mode: 'hold', reference: body.order });
    const stale = pay(key, body);
    // The stale worker's call is inside the provider, held up, before its lease is taken away.
    await waitFor(async () => (await admin.stats()).held === 1, { what: 'the stale worker’s charge to be held' });
    await expireLease(key);
    const recovery = new RecoveryWorker({ config: service.config, operations: [paymentRoute(service.providerUrl)] });
    const report = await recovery.runOnce();
    expect(report).toMatchObject({ examined: 1, completed: 1 });
    await admin.control({ mode: 'release' });
    const staleAnswer = await stale;
    expect(staleAnswer.status).toBe(409);
    // The late call reached the provider, which refused it for its stale fencing token.
    expect(service.calls.staleRefused).toBe(1);
    expect(await admin.count(chargeKey(key))).toBe(1);
    expect(await payments(body.order)).toBe(1);
    const replay = await pay(key, body);
    expect(replay.status).toBe(201);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
  });

  it('lets exactly one of two racing recovery workers take an expired lease', async () => {
    setUp({ leaseSeconds: 30 });
    const key = randomUUID();
    const body = { order: `ord-${key}`, amount: 300 };
    await admin.control({ mode: 'fail-before-charge', reference: body.order });
    await expect(pay(key, body)).rejects.toThrow();
    await expireLease(key);
    const workers = [0, 1].map(
      () => new RecoveryWorker({ config: service.config, operations: [paymentRoute(service.providerUrl)] }),
    );
    const reports = await Promise.all(workers.map((worker) => worker.runOnce()));
    expect(reports.reduce((n, r) => n + r.completed, 0)).toBe(1);
    expect(await admin.count(chargeKey(key))).toBe(1);
    expect(await payments(body.order)).toBe(1);
    expect((await state(key))?.state).toBe('completed');
  });

  it('is not crowded out by expired leases of operations it does not know', async () => {
    setUp({ leaseSeconds: 30 });
    await service.engine.database.query(
      `INSERT INTO retrysafe_operations (tenant, operation, key, fingerprint, state, owner_token, lease_expires_at, mode)
       SELECT 'tenant-z', 'unknown.op@1', 'k' || n, decode(repeat('00', 32), 'hex'), 'in_progress', gen_random_uuid(), now() - interval '1 hour', 'leased'
       FROM generate_series(1, 25) AS n`,
    );
    const key = randomUUID();
    const body = { order: `ord-${key}`, amount: 350 };
    await admin.control({ mode: 'fail-before-charge', reference: body.order });
    await expect(pay(key, body)).rejects.toThrow();
    await expireLease(key);
    const report = await new RecoveryWorker({
      config: service.config,
      operations: [paymentRoute(service.providerUrl)],
      batchSize: 20,
    }).runOnce();
    expect(report).toMatchObject({ examined: 1, completed: 1 });
    expect((await state(key))?.state).toBe('completed');
    await service.engine.database.query("DELETE FROM retrysafe_operations WHERE operation = 'unknown.op@1'");
  });

  it('marks the operation unknown after the last attempt, refuses to run it again, and lets an operator resolve it', async () => {
    setUp({ maxAttempts: 2 });
    const key = randomUUID();
    const body = { order: `ord-${key}`, amount: 400 };
    await admin.control({ mode: 'fail-before-charge', reference: body.order, times: 5 });
    // The lookup cannot tell either, so each failure counts toward giving up.
    await admin.control({ mode: 'fail-lookup', times: 5 });
    await expect(pay(key, body)).rejects.toThrow();
    await expireLease(key);
    const last = await pay(key, body);
    expect(last.status).toBe(409);
    expect(((await last.json()) as { type: string }).type).toMatch(/outcome-unknown$/);
    expect((await state(key))?.state).toBe('unknown');
    const again = await pay(key, body);
    expect(((await again.json()) as { type: string }).type).toMatch(/outcome-unknown$/);
    expect(await admin.count(chargeKey(key))).toBe(0);
    const identity = { tenant: 'tenant-a', operation: 'payments.create@1', key };
    const resolved = await resolveOperation(service.config, identity, {
      state: 'failed',
      reply: { status: 402, body: { error: 'not charged' } },
      reason: 'checked with the provider: no charge',
    });
    expect(resolved).toEqual({ resolved: true });
    const afterResolve = await pay(key, body);
    expect(afterResolve.status).toBe(402);
    expect(afterResolve.headers.get('idempotent-replayed')).toBe('true');
    expect((await state(key))?.reason).toBe('checked with the provider: no charge');
    expect(
      await resolveOperation(service.config, identity, { state: 'completed', reply: { status: 200 }, reason: 'twice' }),
    ).toEqual({ resolved: false, why: 'not-unknown' });
  });
});
