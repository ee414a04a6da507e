import type { CheckOptions, CheckReport, ProbeName, ProbeResult } from '../../../src/check/index.js';

/** Check options for a test server's orders endpoint: two tenants, a second user and a revoked token of the first, a count URL, a body unique per operation. */
export function ordersTarget(origin: string, overrides: Partial<CheckOptions> = {}): CheckOptions {
  return {
    url: `${origin}/orders`,
    body: '{"sku":"{{uuid}}","qty":1}',
    headers: { authorization: 'Bearer demo-a' },
    otherHeaders: { authorization: 'Bearer demo-b' },
    principalHeaders: { authorization: 'Bearer demo-a2' },
    revokedHeaders: { authorization: 'Bearer demo-a-revoked' },
    countUrl: `${origin}/orders?sku={{uuid}}`,
    concurrency: 12,
    ...overrides,
  };
}

/** Each probe's result, by name, for a compact assertion. */
export function resultsOf(report: CheckReport): Record<ProbeName, ProbeResult['result']> {
  return Object.fromEntries(report.probes.map((probe) => [probe.probe, probe.result])) as Record<
    ProbeName,
    ProbeResult['result']
  >;
}

export function probe(report: CheckReport, name: ProbeName): ProbeResult {
  const found = report.probes.find((p) => p.probe === name);
  if (found === undefined) throw new Error(`no ${name} probe in the report`);
  return found;
}

/** The failures of a probe, or none. */
export function failuresOf(result: ProbeResult): readonly string[] {
  return result.result === 'fail' ? result.failures : [];
}
