import { Registry } from 'prom-client';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { maintenanceStore } from '../../src/postgres/postgres-maintenance-store.js';
import { collectStoreGauges } from '../../src/observe/store-gauges.js';
import { metricsObserver } from '../../src/observe/metrics.js';
import { storeTimer } from '../../src/observe/timed-store.js';
import { outboxBacklog } from '../../src/outbox/backlog.js';
import { fromPg, portable } from '../../src/postgres/index.js';
import pg from 'pg';
import { type Engine, engines } from '../support/engines.js';
import { insertRecord } from '../retention/records.js';
import { NOTES, PAYMENTS, runScenarios } from './scenarios.js';
import { unreachableDatabaseUrl } from './unreachable-database.js';

/** The only label names a retrysafe metric may carry; `le` is the histogram's own; `outcome` is a fixed set. */
const ALLOWED_LABELS = new Set(['mode', 'code', 'operation', 'status_class', 'call', 'outcome', 'le']);

interface Series {
  readonly metric: string;
  readonly labels: Readonly<Record<string, string | number | undefined>>;
  readonly value: number;
}

async function allSeries(registry: Registry): Promise<Series[]> {
  const metrics = await registry.getMetricsAsJSON();
  return metrics.flatMap((metric) =>
    metric.values.map((v) => ({
      metric: (v as { metricName?: string }).metricName ?? metric.name,
      labels: v.labels,
      value: v.value,
    })),
  );
}

function valueOf(series: readonly Series[], metric: string, labels: Readonly<Record<string, string>> = {}): number {
  return series
    .filter((s) => s.metric === metric && Object.entries(labels).every(([name, value]) => s.labels[name] === value))
    .reduce((sum, s) => sum + s.value, 0);
}

describe.each(engines)('metrics on $name', (factory) => {
  let engine: Engine;
  beforeAll(async () => {
    engine = await factory.open();
  });
  afterAll(() => engine.close());
  beforeEach(() => engine.database.query('DELETE FROM retrysafe_operations'));

  it('counts every main path by operation, mode and code, and no label value is a tenant or a key', async () => {
    const registry = new Registry();
    const secrets = await runScenarios(engine, [metricsObserver(registry)], storeTimer(registry));
    const series = await allSeries(registry);

    expect(valueOf(series, 'retrysafe_operations_claimed_total', { mode: 'atomic', operation: NOTES })).toBe(1);
    expect(valueOf(series, 'retrysafe_operations_claimed_total', { mode: 'leased', operation: PAYMENTS })).toBe(2);
    expect(
      valueOf(series, 'retrysafe_operations_finished_total', { mode: 'atomic', operation: NOTES, status_class: '2xx' }),
    ).toBe(1);
    expect(valueOf(series, 'retrysafe_replays_total', { operation: NOTES })).toBe(1);
    expect(valueOf(series, 'retrysafe_fingerprint_mismatches_total', { operation: NOTES })).toBe(1);
    expect(valueOf(series, 'retrysafe_conflicts_total', { operation: PAYMENTS })).toBeGreaterThanOrEqual(1);
    expect(valueOf(series, 'retrysafe_take_overs_total', { operation: PAYMENTS })).toBe(1);
    expect(valueOf(series, 'retrysafe_fenced_writes_total', { operation: PAYMENTS })).toBe(1);
    expect(valueOf(series, 'retrysafe_unknown_outcomes_total', { operation: PAYMENTS })).toBe(1);
    expect(valueOf(series, 'retrysafe_store_errors_total', { operation: NOTES })).toBe(1);
    expect(valueOf(series, 'retrysafe_problems_total', { code: 'fingerprint-mismatch', operation: NOTES })).toBe(1);
    expect(valueOf(series, 'retrysafe_problems_total', { code: 'store-unavailable' })).toBe(1);
    expect(valueOf(series, 'retrysafe_problems_total', { code: 'outcome-unknown', operation: PAYMENTS })).toBe(1);
    // PGlite runs one transaction at a time: a duplicate waits before it reaches the database, never on a lock.
    if (engine.concurrent)
      expect(valueOf(series, 'retrysafe_lock_wait_seconds_count', { operation: NOTES })).toBeGreaterThanOrEqual(1);
    for (const call of [
      'claim',
      'complete',
      'commit',
      'claim-lease',
      'take-over',
      'checkpoint',
      'complete-lease',
      'mark-unknown',
      'expired-leases',
    ]) {
      expect(valueOf(series, 'retrysafe_store_call_seconds_count', { call }), call).toBeGreaterThanOrEqual(1);
    }

    const labelValues = series.flatMap((s) => Object.values(s.labels).map(String));
    const forbidden = [...secrets.tenants, ...secrets.keys, ...secrets.bodyValues];
    expect(labelValues.filter((value) => forbidden.some((secret) => value.includes(secret)))).toEqual([]);
    expect(
      [...new Set(series.flatMap((s) => Object.keys(s.labels)))].filter((name) => !ALLOWED_LABELS.has(name)),
    ).toEqual([]);

    // The registry's own exposition reads them like any prom-client metric.
    const text = await registry.metrics();
    expect(text).toContain('# TYPE retrysafe_replays_total counter');
    expect(text).toContain(`retrysafe_replays_total{operation="${NOTES}"} 1`);
    expect(text).toContain('# TYPE retrysafe_lock_wait_seconds histogram');
    if (engine.concurrent)
      expect(text).toMatch(
        new RegExp(`retrysafe_lock_wait_seconds_bucket\\{operation="${NOTES.replace('.', '\\.')}",le="\\+Inf"\\} \\d+`),
      );
  });

  it('reads the gauges from the store on scrape: oldest unfinished operation, unknown outcomes, expired leases, outbox backlog', async () => {
    await insertRecord(engine.database, {
      key: 'stuck-lease',
      state: 'in_progress',
      mode: 'leased',
      leaseExpiresIn: -60,
      createdAgo: 3600,
    });
    await insertRecord(engine.database, {
      key: 'running',
      state: 'in_progress',
      mode: 'leased',
      leaseExpiresIn: 60,
      createdAgo: 10,
    });
    await insertRecord(engine.database, { key: 'unknown-1', state: 'unknown', mode: 'leased' });
    await insertRecord(engine.database, { key: 'unknown-2', state: 'unknown', mode: 'transparent' });
    await insertRecord(engine.database, { key: 'done', state: 'completed' });
    const registry = new Registry();
    collectStoreGauges(registry, maintenanceStore(engine.database), { outbox: () => outboxBacklog(engine.database) });

    const series = await allSeries(registry);

    expect(valueOf(series, 'retrysafe_oldest_in_progress_age_seconds')).toBeGreaterThanOrEqual(3600);
    expect(valueOf(series, 'retrysafe_unknown_operations')).toBe(2);
    expect(valueOf(series, 'retrysafe_expired_leases')).toBe(1);
    expect(valueOf(series, 'retrysafe_outbox_pending')).toBe(0);
    expect(series.find((s) => s.metric === 'retrysafe_outbox_dead')?.value).toBe(0);

    await engine.database.query('DELETE FROM retrysafe_operations');
    expect(valueOf(await allSeries(registry), 'retrysafe_oldest_in_progress_age_seconds')).toBe(0);
  });

  it('reads the parked webhook events on scrape: those given up on, waiting for an operator', async () => {
    await engine.database.query('DELETE FROM retrysafe_webhook_events');
    const registry = new Registry();
    collectStoreGauges(registry, maintenanceStore(engine.database));
    expect(valueOf(await allSeries(registry), 'retrysafe_webhook_events_parked')).toBe(0);
    expect((await allSeries(registry)).filter((s) => s.metric === 'retrysafe_webhook_events_parked')).toHaveLength(1);

    await engine.database.query(
      `INSERT INTO retrysafe_webhook_events (receiver, id, payload, sent_at, state, attempts, last_error, parked_at) VALUES
         ('payments', 'evt_1', '{}', now(), 'dead', 8, 'Error: the ledger is closed', now()),
         ('payments', 'evt_2', '{}', now(), 'dead', 8, 'Error: the ledger is closed', now()),
         ('shipping', 'evt_3', '{}', now(), 'dead', 8, 'Error: no such parcel', NULL)`,
    );
    await engine.database.query(
      `INSERT INTO retrysafe_webhook_events (receiver, id, payload, sent_at) VALUES ('payments', 'evt_4', '{}', now())`,
    );
    // Events parked before migration 11 have no parking time, and count all the same.
    expect(valueOf(await allSeries(registry), 'retrysafe_webhook_events_parked')).toBe(3);
    await engine.database.query('DELETE FROM retrysafe_webhook_events');
  });

  it('leaves the gauges out of a scrape when the store cannot answer, rather than failing the scrape', async () => {
    const pool = new pg.Pool({ connectionString: await unreachableDatabaseUrl() });
    pool.on('error', () => {});
    try {
      const registry = new Registry();
      collectStoreGauges(registry, maintenanceStore(portable(fromPg(pool))));
      const text = await registry.metrics();
      expect(text).toContain('# TYPE retrysafe_expired_leases gauge');
      expect(await allSeries(registry)).toEqual([]);
    } finally {
      await pool.end();
    }
  });
});
