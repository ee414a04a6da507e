import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { operatorStore } from '../../src/postgres/postgres-operator-store.js';
import { engines } from '../support/engines.js';
import { OPERATION, useLeasedHarness } from './harness.js';

/**
 * What the record keeps of failed attempts, for the operator who reads it:
 * how many counted, when the next may run, and the last one's error. The
 * attempt that gives up is one of the failures it reports.
 */
describe.each(engines)('the failures a leased operation records on $name', (factory) => {
  const service = useLeasedHarness(factory);
  const view = (key: string) =>
    operatorStore(service.engine.database).operation({ tenant: 'tenant-a', operation: OPERATION, key });

  it('keeps the count, the end of the backoff and the last error of a released attempt', async () => {
    service.setUp();
    const key = randomUUID();
    await service.hideCharge(`ord-${key}`);
    await expect(service.pay(key, { order: `ord-${key}`, amount: 1800 })).rejects.toThrow(/no complete answer/);
    const released = await view(key);
    expect(released).toMatchObject({ state: 'in_progress', failures: 1 });
    expect(released?.lastError).toEqual(expect.stringMatching(/\S/));
    expect(released?.notBefore?.getTime()).toBeGreaterThan(released?.createdAt.getTime() ?? Infinity);
  });

  it('counts the failure that gives up, and keeps its error', async () => {
    service.setUp({ maxAttempts: 1 });
    const key = randomUUID();
    await service.hideCharge(`ord-${key}`);
    expect((await service.pay(key, { order: `ord-${key}`, amount: 1900 })).status).toBe(409);
    const stopped = await view(key);
    expect(stopped).toMatchObject({ state: 'unknown', failures: 1 });
    expect(stopped?.reason).toMatch(/^1 of 1 attempts failed/);
    expect(stopped?.lastError).toEqual(expect.stringMatching(/\S/));
  });
});
