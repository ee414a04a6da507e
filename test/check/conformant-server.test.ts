import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { check } from '../../src/check/index.js';
import { type Engine, engines } from '../support/engines.js';
import { ordersTarget, probe, resultsOf } from './support/check-target.js';
import type { Listening } from './support/listen.js';
import { ORDERS_TABLE, startOrdersApp } from './support/orders-app.js';
import { QUICK_START_TABLE, startQuickStartApp } from './support/quick-start-app.js';

describe.each(engines)('check against an Express endpoint on retrysafe atomic routes, $name', (factory) => {
  let engine: Engine;
  let app: Listening;
  let quickStart: Listening;
  beforeAll(async () => {
    engine = await factory.open();
    await engine.database.query(ORDERS_TABLE);
    await engine.database.query(QUICK_START_TABLE);
    app = await startOrdersApp(engine, 200);
    quickStart = await startQuickStartApp(engine);
  });
  afterAll(async () => {
    await app.close();
    await quickStart.close();
    await engine.close();
  });

  it('passes every probe, and the orders table agrees with the counts', { timeout: 180_000 }, async () => {
    // The app knows no second user of a tenant nor a revoked token: those two probes have nothing to send.
    const bursts = 3;
    const report = await check(
      ordersTarget(app.origin, { concurrency: 32, bursts, principalHeaders: undefined, revokedHeaders: undefined }),
    );
    expect(resultsOf(report)).toEqual({
      concurrency: 'pass',
      replay: 'pass',
      mismatch: 'pass',
      'tenant-isolation': 'pass',
      'bad-keys': 'pass',
      'slow-client': 'pass',
      'lost-response': 'pass',
      'other-principal': 'not-applicable',
      'revoked-credential': 'not-applicable',
    });
    const replay = probe(report, 'replay');
    expect(replay.result === 'pass' && replay.warnings).toEqual([]);
    // The order takes 200 ms, so the slow client really gave up while its first attempt ran.
    expect(probe(report, 'slow-client').evidence.answers).toMatchObject({ 'first attempt: given up by the client': 1 });
    // The lost response was confirmed by the count before the retry.
    expect(probe(report, 'lost-response').evidence.notes.join('\n')).toMatch(/the first attempt's work landed/);
    // One order per burst, one for the second tenant, one from the slow client, one from the lost response; nothing else ran.
    const { rows } = await engine.database.query<{ tenant: string; n: number }>(
      'SELECT tenant, count(*)::int AS n FROM orders GROUP BY tenant ORDER BY tenant',
    );
    expect(rows).toEqual([
      { tenant: 'a', n: bursts + 2 },
      { tenant: 'b', n: 1 },
    ]);
  });

  it(
    "gets no failure on the README's quick start route, whose validator drops unknown members",
    { timeout: 180_000 },
    async () => {
      const report = await check({
        url: `${quickStart.origin}/orders`,
        body: '{"sku":"{{uuid}}"}',
        headers: { 'x-tenant': 'tenant-a' },
        concurrency: 8,
      });
      const failed = report.probes.filter((p) => p.result === 'fail').map((p) => p.probe);
      expect(failed).toEqual([]);
      expect(probe(report, 'mismatch').result).toBe('pass');
      expect(report.outcome).toBe('pass');
    },
  );
});
