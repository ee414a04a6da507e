import { describe, expect, it } from 'vitest';
import { adapters } from '../support/apps.js';
import { engines } from '../support/engines.js';
import { expectProblem, newKey, useApp, useEngine } from './harness.js';

/**
 * A handler that catches one of its own failed statements without a savepoint
 * goes on in a transaction PostgreSQL has aborted: the record cannot be
 * written, and nothing the handler did stands. That is the handler's defect,
 * not the store's: it is answered as such, once, without Retry-After, rather
 * than as a store outage that invites the same retry forever.
 */
describe.each(engines)('a handler that swallows its own failed statement, on $name', (engine) => {
  const ref = useEngine(engine);

  describe.each(adapters)('through $name', (adapter) => {
    const t = useApp(ref, adapter, { retryAfterSeconds: 3 });

    it('is answered 500 transaction-aborted without Retry-After; nothing is applied or stored', async () => {
      const key = newKey();
      const res = await t.post({ key, body: { sku: 'SWALLOWS-A-FAILURE', qty: 1 } });
      expectProblem(res, 'transaction-aborted', 500);
      expect(res.headers['retry-after']).toBeUndefined();
      expect(t.calls()).toBe(1);
      expect(await t.orders()).toBe(0);
      expect(await t.records()).toBe(0);
    });

    it('leaves the key free, as nothing was applied: a retry with the same key runs the handler again', async () => {
      const key = newKey();
      expectProblem(await t.post({ key, body: { sku: 'SWALLOWS-A-FAILURE', qty: 1 } }), 'transaction-aborted', 500);
      expectProblem(await t.post({ key, body: { sku: 'SWALLOWS-A-FAILURE', qty: 1 } }), 'transaction-aborted', 500);
      expect(t.calls()).toBe(2);
      expect(await t.records()).toBe(0);
    });
  });
});
