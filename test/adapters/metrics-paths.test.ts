import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { metricsObserver } from '../../src/observe/metrics.js';
import type { SqlClient, SqlDatabase } from '../../src/store/sql-client.js';
import { expressAdapter, holdNextReply } from '../support/apps.js';
import { engines } from '../support/engines.js';
import { countingHeldClaims } from '../support/held-claims.js';
import { newKey, useApp, useEngine } from './harness.js';
import { waitFor } from '../support/wait-for.js';

/** Every answer retrysafe gives itself is counted, those given before the store included; only real waits are lock waits. */
describe.each(engines)('metrics of the request paths on $name', (factory) => {
  const ref = useEngine(factory);
  const registry = new Registry();
  let watched: ReturnType<typeof countingHeldClaims<SqlClient>> | undefined;
  const h = useApp(
    ref,
    expressAdapter,
    { readBeforeClaim: 'never', observers: [metricsObserver(registry)] },
    (database: SqlDatabase<SqlClient>) => (watched = countingHeldClaims(database)).database,
  );

  const value = async (metric: string, labels: Readonly<Record<string, string>> = {}): Promise<number> => {
    const metrics = await registry.getMetricsAsJSON();
    return metrics
      .flatMap((m) =>
        m.values.map((v) => ({
          name: (v as { metricName?: string }).metricName ?? m.name,
          labels: v.labels,
          value: v.value,
        })),
      )
      .filter((s) => s.name === metric && Object.entries(labels).every(([name, v]) => s.labels[name] === v))
      .reduce((sum, s) => sum + s.value, 0);
  };

  it('counts the refusals given before the store: missing and invalid keys, 401, 403', async () => {
    const before = {
      missing: await value('retrysafe_problems_total', { code: 'idempotency-key-missing' }),
      invalid: await value('retrysafe_problems_total', { code: 'idempotency-key-invalid' }),
      unauthenticated: await value('retrysafe_problems_total', { code: 'unauthenticated' }),
      forbidden: await value('retrysafe_problems_total', { code: 'forbidden' }),
    };
    expect((await h.post({ body: { sku: 'A' } })).status).toBe(400);
    expect((await h.post({ key: 'a b', body: { sku: 'A' } })).status).toBe(400);
    expect((await h.post({ key: newKey(), token: null, body: { sku: 'A' } })).status).toBe(401);
    expect((await h.post({ key: newKey(), token: 'token-revoked', body: { sku: 'A' } })).status).toBe(403);
    expect({
      missing: await value('retrysafe_problems_total', { code: 'idempotency-key-missing' }),
      invalid: await value('retrysafe_problems_total', { code: 'idempotency-key-invalid' }),
      unauthenticated: await value('retrysafe_problems_total', { code: 'unauthenticated' }),
      forbidden: await value('retrysafe_problems_total', { code: 'forbidden' }),
    }).toEqual({
      missing: before.missing + 1,
      invalid: before.invalid + 1,
      unauthenticated: before.unauthenticated + 1,
      forbidden: before.forbidden + 1,
    });
    // Counted under the route's operation, like every other answer of the route.
    expect(await value('retrysafe_problems_total', { code: 'forbidden', operation: 'orders.create@1' })).toBe(
      before.forbidden + 1,
    );
  });

  it('does not record a plain replay answered through the claim as a lock wait', async () => {
    const waits = await value('retrysafe_lock_wait_seconds_count');
    const key = newKey();
    expect((await h.post({ key, body: { sku: 'A' } })).status).toBe(201);
    const replay = await h.post({ key, body: { sku: 'A' } });
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(await value('retrysafe_replays_total')).toBeGreaterThanOrEqual(1);
    expect(await value('retrysafe_lock_wait_seconds_count')).toBe(waits);
  });

  it('records a duplicate that waited behind a running attempt as a lock wait', async (context) => {
    // PGlite runs one transaction at a time: a duplicate waits before it reaches the database, never on a lock.
    if (!h.concurrent) context.skip();
    const waits = await value('retrysafe_lock_wait_seconds_count');
    const key = newKey();
    const held = holdNextReply(h.app.state);
    const first = h.post({ key, body: { sku: 'A' } });
    // The first attempt holds the claim once its handler runs, and keeps it until the duplicate found it held.
    await waitFor(() => h.calls() === 1);
    if (watched === undefined) throw new Error('The app is not running yet.');
    const found = watched.nextHeld();
    const duplicate = h.post({ key, body: { sku: 'A' } });
    await found;
    held.open();
    expect((await first).status).toBe(201);
    expect((await duplicate).headers['idempotent-replayed']).toBe('true');
    expect(await value('retrysafe_lock_wait_seconds_count')).toBe(waits + 1);
  });
});
