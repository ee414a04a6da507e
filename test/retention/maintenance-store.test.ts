import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { fingerprint } from '../../src/core/fingerprint.js';
import { RetrysafeError } from '../../src/core/errors.js';
import { maintenanceStore } from '../../src/postgres/postgres-maintenance-store.js';
import { postgresStore } from '../../src/postgres/index.js';
import { defaultRetention } from '../../src/core/retention.js';
import { type Engine, engines } from '../support/engines.js';
import { insertRecord } from './records.js';

describe.each(engines)('the maintenance store on $name', (factory) => {
  let engine: Engine;
  beforeAll(async () => {
    engine = await factory.open();
  });
  afterAll(() => engine.close());
  beforeEach(() => engine.database.query('DELETE FROM retrysafe_operations'));

  it('inspects one operation with its steps, reading the body only when asked', async () => {
    const store = postgresStore(engine.database);
    const identity = { tenant: 'tenant-a', operation: 'payments.create@1', key: randomUUID() };
    const claim = await store.claimLease({
      identity,
      fingerprint: fingerprint({ amount: 5 }),
      input: { amount: 5 },
      mode: 'leased',
      ownerToken: randomUUID(),
      leaseSeconds: 60,
    });
    if (claim.kind !== 'claimed') throw new Error('not claimed');
    await store.checkpoint(claim.lease, 'charge', { id: 'ch_1' });
    await store.completeLease(claim.lease, {
      state: 'completed',
      reply: { status: 201, headers: { location: '/payments/ch_1' }, body: Buffer.from('paid') },
      retention: defaultRetention,
    });
    const maintenance = maintenanceStore(engine.database);

    const details = await maintenance.inspect(identity);
    expect(details).toMatchObject({
      identity,
      state: 'completed',
      mode: 'leased',
      status: 201,
      resource: '/payments/ch_1',
      bodyBytes: 4,
      body: undefined,
      leaseOwner: undefined,
    });
    expect(details?.steps.map((step) => step.name)).toEqual(['charge']);
    expect(Buffer.from(details?.fingerprint ?? []).equals(Buffer.from(fingerprint({ amount: 5 })))).toBe(true);
    expect(Buffer.from((await maintenance.inspect(identity, { body: true }))?.body ?? []).toString()).toBe('paid');
    expect(await maintenance.inspect({ ...identity, key: 'absent' })).toBeUndefined();
  });

  it('lists expired leases and unknown outcomes past a minimum age, each kind oldest first and capped', async () => {
    await insertRecord(engine.database, {
      key: 'lease-1h',
      state: 'in_progress',
      mode: 'leased',
      leaseExpiresIn: -10,
      createdAgo: 3600,
    });
    await insertRecord(engine.database, {
      key: 'lease-2h',
      state: 'in_progress',
      mode: 'leased',
      leaseExpiresIn: -20,
      createdAgo: 7200,
    });
    await insertRecord(engine.database, {
      key: 'lease-held',
      state: 'in_progress',
      mode: 'leased',
      leaseExpiresIn: 60,
      createdAgo: 7200,
    });
    await insertRecord(engine.database, { key: 'unknown-new', state: 'unknown', mode: 'transparent', createdAgo: 5 });
    const maintenance = maintenanceStore(engine.database);

    const all = await maintenance.stuck({ olderThanSeconds: 0, limit: 10 });
    expect(all.map((s) => [s.kind, s.identity.key])).toEqual([
      ['expired-lease', 'lease-2h'],
      ['expired-lease', 'lease-1h'],
      ['unknown', 'unknown-new'],
    ]);
    expect(all[0]?.ageSeconds).toBeGreaterThanOrEqual(7200);
    expect((await maintenance.stuck({ olderThanSeconds: 60, limit: 1 })).map((s) => s.identity.key)).toEqual([
      'lease-2h',
    ]);
    await expect(maintenance.stuck({ olderThanSeconds: 0, limit: 0 })).rejects.toThrow(RetrysafeError);
  });
});
