import { fillTemplate } from '../body-template.js';
import type { ProbeResult } from '../check-report.js';
import { exchangeLabel } from '../exchange.js';
import { Findings } from '../findings.js';
import type { ProbeContext } from '../probe-context.js';

/** A malformed `Idempotency-Key`, built from fresh UUIDs so no two runs share one. */
interface BadKey {
  readonly label: string;
  keys(fresh: () => string): readonly string[];
  /** Sent on a raw socket: HTTP clients refuse or re-encode these bytes. */
  readonly raw?: boolean;
}

const badKeys: readonly BadKey[] = [
  { label: 'missing key', keys: () => [] },
  { label: 'empty key', keys: () => [''] },
  { label: '256-byte key', keys: (fresh) => [fresh().replaceAll('-', '').repeat(8)] },
  // The UTF-8 bytes of "é", written as they are.
  { label: 'non-ASCII key', keys: (fresh) => [Buffer.from(`clé-${fresh()}`, 'utf8').toString('latin1')], raw: true },
  { label: 'key sent twice', keys: (fresh) => [fresh(), fresh()] },
];

/** Each malformed key must get 400, and none may create anything. */
export async function badKeysProbe(ctx: ProbeContext): Promise<ProbeResult> {
  const findings = new Findings('bad-keys');
  const uuid = ctx.uuid();
  const body = fillTemplate(ctx.plan.body, uuid);
  const before = await ctx.count('first', uuid);
  for (const bad of badKeys) {
    const exchange = await ctx.attempt({ keys: bad.keys(ctx.uuid), body, raw: bad.raw ?? false });
    const label = exchangeLabel(exchange);
    findings.saw(`${bad.label}: ${label}`);
    if (exchange.kind !== 'answered' || exchange.answer.status !== 400)
      findings.fail(`${bad.label}: expected 400, got ${label}`);
  }
  const after = await ctx.count('first', uuid);
  findings.resources(before, after, 0);
  return findings.result();
}
