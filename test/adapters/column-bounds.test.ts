import { describe, expect, it } from 'vitest';
import { idempotency } from '../../src/modes/idempotency.js';
import { postgresStore } from '../../src/postgres/index.js';
import { adapters, UNSTORABLE_TENANTS } from '../support/apps.js';
import { engines } from '../support/engines.js';
import { expectProblem, newKey, useApp, useEngine } from './harness.js';

const body = { sku: 'A', qty: 1 };

/**
 * What the identity's columns cannot hold is refused before the store is
 * asked: an INSERT the column refuses would fail on every retry, each answered
 * 503 with Retry-After after running the handler again.
 */
describe.each(engines)('values the operation record cannot hold, on $name', (engine) => {
  const ref = useEngine(engine);

  describe.each(adapters)('through $name', (adapter) => {
    const t = useApp(ref, adapter);

    it.each(Object.entries(UNSTORABLE_TENANTS))(
      'answers 500 tenant-invalid to a tenant the column refuses (%s), before any store call, without running the handler',
      async (token) => {
        const res = await t.post({ key: newKey(), token, body });
        expectProblem(res, 'tenant-invalid', 500);
        expect(res.headers['retry-after']).toBeUndefined();
        expect(t.calls()).toBe(0);
        expect(await t.orders()).toBe(0);
        expect(await t.records()).toBe(0);
      },
    );

    it('stores a tenant of 255 bytes, the most the column holds', async () => {
      const res = await t.post({ key: newKey(), token: 'token-longest-tenant', body });
      expect(res.status).toBe(201);
      expect(t.calls()).toBe(1);
    });
  });

  it('refuses key limits the key column cannot hold when configured', () => {
    const store = postgresStore(ref.engine.database);
    expect(() => idempotency({ store, keyLimits: { maxBytes: 256 } })).toThrow(
      expect.objectContaining({
        code: 'misuse',
        message: 'keyLimits.maxBytes must be a whole number from 1 to 255, got 256.',
      }),
    );
    expect(() => idempotency({ store, keyLimits: { minBytes: 0 } })).toThrow(
      expect.objectContaining({
        code: 'misuse',
        message: 'keyLimits.minBytes must be a whole number from 1 to 255, got 0.',
      }),
    );
    expect(() => idempotency({ store, keyLimits: { minBytes: 20, maxBytes: 10 } })).toThrow(
      expect.objectContaining({ code: 'misuse' }),
    );
    expect(() => idempotency({ store, keyLimits: { maxBytes: 255 } })).not.toThrow();
  });
});
