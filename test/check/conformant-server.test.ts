import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { check } from '../../src/check/index.js';
import { type Engine, engines } from '../support/engines.js';
import { ordersTarget, probe, resultsOf } from './support/check-target.js';
import type { Listening } from './support/listen.js';
import { ORDERS_TABLE, startOrdersApp } from './support/orders-app.js';

describe.each(engines)('check against an Express endpoint on retrysafe atomic routes, $name', (factory) => {
  let engine: Engine;
  let app: Listening;
  beforeAll(async () => {
    engine = await factory.open();
    await engine.database.query(ORDERS_TABLE);
    app = await startOrdersApp(engine, 200);
  });
  afterAll(async () => {
    await app.close();
    await engine.close();
  });

  it('passes every probe, and the orders table agrees with the counts', { timeout: 180_000 }, async () => {
    const report = await check(ordersTarget(app.origin, { concurrency: 32 }));
    expect(resultsOf(report)).toEqual({
      concurrency: 'pass',
      replay: 'pass',
      mismatch: 'pass',
      'tenant-isolation': 'pass',
      'bad-keys': 'pass',
      'slow-client': 'pass',
    });
    const replay = probe(report, 'replay');
    expect(replay.result === 'pass' && replay.warnings).toEqual([]);
    // The order takes 200 ms, so the slow client really gave up while its first attempt ran.
    expect(probe(report, 'slow-client').evidence.answers).toMatchObject({ 'first attempt: given up by the client': 1 });
    // One order from the burst, one for the second tenant, one from the slow client; nothing else ran.
    const { rows } = await engine.database.query<{ tenant: string; n: number }>('SELECT tenant, count(*)::int AS n FROM orders GROUP BY tenant ORDER BY tenant');
    expect(rows).toEqual([
      { tenant: 'a', n: 2 },
      { tenant: 'b', n: 1 },
    ]);
  });
});
