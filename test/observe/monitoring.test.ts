import { readFile } from 'node:fs/promises';
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { collectStoreGauges, metricsObserver, storeTimer } from '../../src/observe/index.js';

const ALERTS = new URL('../../monitoring/retrysafe-alerts.yml', import.meta.url);
const DASHBOARD = new URL('../../monitoring/retrysafe-dashboard.json', import.meta.url);

/** Every series name retrysafe's observers register, read from a real prom-client registry. */
async function exportedSeries(): Promise<Set<string>> {
  const registry = new Registry();
  metricsObserver(registry);
  storeTimer(registry);
  const none = (): Promise<never> => Promise.reject(new Error('not read'));
  collectStoreGauges(registry, { stats: none }, { outbox: none });
  const names = new Set<string>();
  for (const metric of await registry.getMetricsAsJSON()) {
    names.add(metric.name);
    if (String(metric.type) === 'histogram')
      for (const suffix of ['_bucket', '_sum', '_count']) names.add(`${metric.name}${suffix}`);
  }
  return names;
}

/** The label names retrysafe's metrics carry, and `le` of the histograms. */
const LABELS = new Set(['operation', 'mode', 'status_class', 'code', 'call', 'outcome', 'le']);

function checkExpression(expr: string, exported: ReadonlySet<string>): void {
  const metrics = [...expr.matchAll(/\bretrysafe_\w+/g)].map((m) => m[0]);
  expect(metrics.length, expr).toBeGreaterThan(0);
  for (const name of metrics) expect(exported, expr).toContain(name);
  const grouped = [...expr.matchAll(/\bby \(([^)]*)\)/g)].flatMap((m) =>
    (m[1] ?? '').split(',').map((label) => label.trim()),
  );
  for (const label of grouped) expect(LABELS, expr).toContain(label);
}

describe('the shipped alert rules and dashboard', () => {
  it('name only metrics and labels that retrysafe exports', async () => {
    const exported = await exportedSeries();
    const rules = await readFile(ALERTS, 'utf8');
    const expressions = [...rules.matchAll(/^\s*expr: (.+)$/gm)].map((m) => m[1] ?? '');
    // One expression per rule, each on one line, so that none escapes this check.
    expect(expressions).toHaveLength([...rules.matchAll(/^\s*- alert: /gm)].length);
    expect(expressions.length).toBeGreaterThanOrEqual(6);
    for (const expr of expressions) checkExpression(expr, exported);

    const dashboard = JSON.parse(await readFile(DASHBOARD, 'utf8')) as { panels: { targets: { expr: string }[] }[] };
    const targets = dashboard.panels.flatMap((panel) => panel.targets.map((target) => target.expr));
    expect(targets.length).toBeGreaterThan(10);
    for (const expr of targets) checkExpression(expr, exported);
  });

  it('alert on each thing an operator must act on', async () => {
    const rules = await readFile(ALERTS, 'utf8');
    for (const metric of [
      'retrysafe_unknown_operations',
      'retrysafe_oldest_in_progress_age_seconds',
      'retrysafe_expired_leases',
      'retrysafe_outbox_oldest_pending_age_seconds',
      'retrysafe_outbox_dead',
      'retrysafe_webhook_events_parked',
      'retrysafe_store_errors_total',
    ]) {
      expect(rules).toMatch(new RegExp(`expr: .*\\b${metric}\\b`));
    }
  });
});
