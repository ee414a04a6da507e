import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../support/wait-for.js';
import { check } from '../../src/check/index.js';
import { maintenanceStore } from '../../src/postgres/index.js';
import { type Engine, engines } from '../support/engines.js';
import { ordersTarget, probe, resultsOf } from './support/check-target.js';
import type { Listening } from './support/listen.js';
import { ORDERS_TABLE, SHORT_LIVED, startOrdersApp } from './support/orders-app.js';
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
    // A key whose response was kept one second, swept into a tombstone: retrysafe documents 410 response-expired.
    const expiredKey = `${SHORT_LIVED}1`;
    const expiredBody = '{"sku":"expired","qty":1}';
    const made = await fetch(`${app.origin}/orders`, {
      method: 'POST',
      headers: { authorization: 'Bearer demo-a', 'content-type': 'application/json', 'idempotency-key': expiredKey },
      body: expiredBody,
    });
    expect(made.status).toBe(201);
    // Its response lives 1 s: the sweep tombstones it once that has passed, and not before.
    await waitFor(async () => (await maintenanceStore(engine.database).tombstoneExpired(100)).changed === 1, {
      what: 'the response to expire',
    });
    // The app knows no second user of a tenant nor a revoked token: those two probes have nothing to send.
    const bursts = 3;
    const report = await check(
      ordersTarget(app.origin, {
        concurrency: 32,
        bursts,
        principalHeaders: undefined,
        revokedHeaders: undefined,
        expiredKey,
        expiredBody,
      }),
    );
    expect(resultsOf(report)).toEqual({
      concurrency: 'pass',
      replay: 'pass',
      'equivalent-body': 'pass',
      mismatch: 'pass',
      'tenant-isolation': 'pass',
      'bad-keys': 'pass',
      'slow-client': 'pass',
      'lost-response': 'pass',
      'other-principal': 'not-applicable',
      'revoked-credential': 'not-applicable',
      'expired-key': 'pass',
      'published-specification': 'pass',
    });
    expect(probe(report, 'expired-key').evidence.answers).toEqual({ 'first: 410': 1, 'again: 410': 1 });
    expect(probe(report, 'published-specification').evidence.notes.join('\n')).toMatch(/states an expiry/);
    expect(report.clauses.filter((c) => c.section === '2.3' || c.section === '2.5').map((c) => c.result)).toEqual([
      'pass',
      'pass',
    ]);
    const replay = probe(report, 'replay');
    expect(replay.result === 'pass' && replay.warnings).toEqual([]);
    // The order takes 200 ms, so the slow client really gave up while its first attempt ran.
    expect(probe(report, 'slow-client').evidence.answers).toMatchObject({ 'first attempt: given up by the client': 1 });
    // The lost response was confirmed by the count before the retry.
    expect(probe(report, 'lost-response').evidence.notes.join('\n')).toMatch(/the first attempt's work landed/);
    // One order per burst, one for the second tenant, one from the slow client, one from the lost response, the
    // expired key's first; nothing else ran (the expired key ran once).
    const { rows } = await engine.database.query<{ tenant: string; n: number }>(
      'SELECT tenant, count(*)::int AS n FROM orders GROUP BY tenant ORDER BY tenant',
    );
    expect(rows).toEqual([
      { tenant: 'a', n: bursts + 3 },
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
