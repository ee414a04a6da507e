import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { defaultProblemBase } from '../../src/index.js';
import { engines } from '../support/engines.js';
import { useLeasedHarness } from './harness.js';
import { noCalls, paymentRoute } from './payment-route.js';
import { waitFor } from '../support/wait-for.js';

const refusedType = `${defaultProblemBase}key-of-another-principal`;

describe.each(engines)('a leased route scoped per user, on $name', (factory) => {
  const service = useLeasedHarness(factory);
  const calls = noCalls();
  const setUp = (options: Parameters<typeof service.setUp>[0] = {}): void => {
    Object.assign(calls, noCalls());
    service.setUp(options, {
      ...paymentRoute(service.providerUrl, calls),
      principal: ({ request }) => request.headers.get('x-user') ?? undefined,
    });
  };

  it("refuses another user of the same tenant who sends the first user's key, and replays to the first", async () => {
    setUp();
    const key = randomUUID();
    const body = { order: `ord-${key}`, amount: 700 };
    const first = await service.pay(key, body, 'tenant-a', 'user-1');
    expect(first.status).toBe(201);
    const firstBody = await first.text();
    const other = await service.pay(key, body, 'tenant-a', 'user-2');
    expect(other.status).toBe(403);
    const problem = (await other.json()) as { type: string; detail: string };
    expect(problem.type).toBe(refusedType);
    expect(JSON.stringify(problem)).not.toContain(firstBody);
    expect(other.headers.get('location')).toBeNull();
    const again = await service.pay(key, body, 'tenant-a', 'user-1');
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(await again.text()).toBe(firstBody);
    expect(calls).toMatchObject({ charge: 1, record: 1 });
    expect(await service.admin.count(service.chargeKey(key))).toBe(1);
  });

  it("never lets another user take over the first user's expired lease", async () => {
    setUp({ leaseSeconds: 20 });
    const key = randomUUID();
    const body = { order: `ord-${key}`, amount: 800 };
    await service.admin.control({ mode: 'hold', reference: body.order });
    const first = service.pay(key, body, 'tenant-a', 'user-1');
    await waitFor(async () => (await service.admin.stats()).held === 1, {
      what: 'the first attempt’s charge to be held',
    });
    await service.expireLease(key);
    const other = await service.pay(key, body, 'tenant-a', 'user-2');
    expect(other.status).toBe(403);
    expect(((await other.json()) as { type: string }).type).toBe(refusedType);
    expect(await service.state(key)).toMatchObject({ state: 'in_progress', attempt: 1 });
    await service.admin.control({ mode: 'release' });
    expect((await first).status).toBe(201);
    expect(await service.state(key)).toMatchObject({ state: 'completed', attempt: 1 });
    expect(calls).toMatchObject({ charge: 1, record: 1 });
  });

  it('answers 401 when the route names a user and the request carries none, and claims nothing', async () => {
    setUp();
    const key = randomUUID();
    const answer = await service.pay(key, { order: `ord-${key}`, amount: 900 }, 'tenant-a');
    expect(answer.status).toBe(401);
    expect(((await answer.json()) as { type: string }).type).toBe(`${defaultProblemBase}unauthenticated`);
    expect(await service.state(key)).toBeUndefined();
    expect(calls.charge).toBe(0);
  });
});
