import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { consume } from '../../src/inbox/index.js';
import { Relay, webhookTransport } from '../../src/outbox/index.js';
import { maintenanceStore } from '../../src/postgres/postgres-maintenance-store.js';
import { Sweeper } from '../../src/retention/sweeper.js';
import { WebhookWorker } from '../../src/webhooks/index.js';
import { type Engine, engines } from '../support/engines.js';
import { hold } from '../support/hold.js';

/**
 * The background workers against a stalled store: a table locked by another
 * transaction holds every statement on it, and each worker's pass fails with
 * `store-unavailable` within its store budget instead of waiting for the lock;
 * so does the inbox's `consume`, which a message consumer calls.
 */
describe.each(engines)('the background workers when the store stalls, on $name', (factory) => {
  let engine: Engine;
  beforeAll(async () => {
    engine = await factory.open();
  });
  afterAll(() => engine.close());

  const stalled = async (table: string, pass: () => Promise<unknown>): Promise<void> => {
    const release = await hold(engine.database, `LOCK TABLE ${table} IN ACCESS EXCLUSIVE MODE`);
    try {
      await expect(pass()).rejects.toMatchObject({ code: 'store-unavailable' });
    } finally {
      await release();
    }
  };

  it('gives up a sweep stuck behind a lock within its store budget', async () => {
    const sweeper = new Sweeper({ store: maintenanceStore(engine.database), storeTimeoutMs: 200 });
    const release = await hold(engine.database, 'LOCK TABLE retrysafe_operations IN ACCESS EXCLUSIVE MODE');
    try {
      // Each step runs whether or not another failed, so the pass reports its failed steps rather than rejecting.
      const report = await sweeper.runOnce();
      // PGlite's one connection stalls the activity step too; PostgreSQL runs it on another table.
      expect(report.failed.map(({ step }) => step)).toEqual(expect.arrayContaining(['tombstone', 'delete']));
      for (const { error } of report.failed) expect(error).toMatchObject({ code: 'store-unavailable' });
      expect(report).toMatchObject({ tombstoned: 0, deleted: 0 });
    } finally {
      await release();
    }
  });

  it("gives up a relay's pass stuck behind a lock within its store budget", async () => {
    const relay = new Relay({
      database: engine.database,
      transport: webhookTransport({ url: 'http://127.0.0.1:9/unused', secrets: 'whsec_dW51c2Vk' }),
      storeTimeoutMs: 200,
    });
    await stalled('retrysafe_outbox', () => relay.runOnce());
  });

  it("gives up a webhook worker's pass stuck behind a lock within its store budget", async () => {
    const worker = new WebhookWorker({
      database: engine.database,
      receiver: 'payments',
      handler: () => Promise.resolve(),
      storeTimeoutMs: 200,
    });
    await stalled('retrysafe_webhook_events', () => worker.runOnce());
  });

  it('gives up a consume stuck behind a lock within its store budget, and runs no handler', async () => {
    let ran = 0;
    await stalled('retrysafe_inbox', () =>
      consume(engine.database, 'budgets', 'message-1', () => Promise.resolve(ran++), { storeTimeoutMs: 200 }),
    );
    expect(ran).toBe(0);
  });
});
