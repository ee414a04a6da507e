import { fillTemplate } from './body-template.js';
import { CheckError } from './check-error.js';
import { DRAFT, judgeClauses } from './clauses.js';
import { type CheckOptions, type CheckPlan, planCheck } from './check-options.js';
import { type CheckReport, notApplicable, type ProbeResult } from './check-report.js';
import { credentialWatch } from './credential-watch.js';
import { type ProbeContext, probeContext, type Tenant } from './probe-context.js';
import { badKeysProbe } from './probes/bad-keys.js';
import { concurrencyProbe } from './probes/concurrency.js';
import { equivalentBodyProbe } from './probes/equivalent-body.js';
import { expiredKeyProbe } from './probes/expired-key.js';
import { lostResponseProbe } from './probes/lost-response.js';
import { mismatchProbe } from './probes/mismatch.js';
import { otherPrincipalProbe, revokedCredentialProbe } from './probes/replay-authorisation.js';
import { publishedSpecificationProbe } from './probes/published-specification.js';
import { replayProbe } from './probes/replay.js';
import { slowClientProbe } from './probes/slow-client.js';
import { tenantIsolationProbe } from './probes/tenant-isolation.js';
import { assertReachable } from './reachability.js';
import { RequestBudget } from './request-budget.js';

/** Requests beyond the concurrency bursts and their count reads: the other probes, their retries and count reads, with room to spare. */
const REQUESTS_BEYOND_BURSTS = 130;

/**
 * Checks an HTTP endpoint's idempotency from outside, with every probe in
 * turn. Requests go only to the URL and the count URL given, each on its own
 * connection, bounded in number and by a deadline. Throws `CheckError` when
 * the check cannot run at all (bad options, an unreachable host, an unreadable
 * count URL); a probe that fails is a result in the report.
 */
export async function check(options: CheckOptions): Promise<CheckReport> {
  const plan = planCheck(options);
  // Any value will do: only the count URL's host is needed here.
  const countUrl = plan.countUrl === undefined ? [] : [new URL(fillTemplate(plan.countUrl, 'x'))];
  await assertReachable([plan.url, ...countUrl], plan.timeoutMs);
  const budget = new RequestBudget(requestBound(plan), plan.deadlineMs);
  const ctx = probeContext(plan, budget);
  await assertCountable(ctx, plan);

  const watch = credentialWatch(ctx);
  const concurrency = await concurrencyProbe(watch.ctx);
  const probes: ProbeResult[] = [watch.judge(concurrency.result)];
  const rest: readonly ((ctx: ProbeContext) => Promise<ProbeResult>)[] = [
    (c) => replayProbe(c, concurrency.start),
    (c) => equivalentBodyProbe(c, concurrency.start),
    (c) => mismatchProbe(c, concurrency.start),
    (c) => tenantIsolationProbe(c, concurrency.start),
    badKeysProbe,
    slowClientProbe,
    lostResponseProbe,
    (c) => otherPrincipalProbe(c, concurrency.start),
    (c) => revokedCredentialProbe(c, concurrency.start),
    expiredKeyProbe,
    publishedSpecificationProbe,
  ];
  for (const probe of rest) {
    const watched = credentialWatch(ctx);
    probes.push(watched.judge(await probe(watched.ctx)));
  }
  return {
    url: plan.url.toString(),
    method: plan.method,
    outcome: outcomeOf(probes),
    probes,
    requests: budget.used,
    draft: DRAFT,
    clauses: judgeClauses(probes),
  };
}

/** The most requests a check sends, count reads included. */
export function requestBound(plan: Pick<CheckPlan, 'concurrency' | 'bursts'>): number {
  return (plan.concurrency + 2) * plan.bursts + REQUESTS_BEYOND_BURSTS;
}

/** A failure is a verdict; without one, a check where most probes could not run is no verdict either way. */
function outcomeOf(probes: readonly ProbeResult[]): CheckReport['outcome'] {
  if (probes.some((probe) => probe.result === 'fail')) return 'fail';
  return notApplicable(probes).length * 2 > probes.length ? 'inconclusive' : 'pass';
}

/** A count URL that cannot be read would fail every probe for a reason of its own: say so once. */
async function assertCountable(ctx: ProbeContext, plan: CheckPlan): Promise<void> {
  const tenants: Tenant[] = plan.otherHeaders === undefined ? ['first'] : ['first', 'second'];
  for (const tenant of tenants) {
    const reading = await ctx.count(tenant, ctx.uuid());
    if (reading !== undefined && !reading.ok) {
      throw new CheckError(
        'count-unreadable',
        `The count URL cannot be read with the ${tenant} tenant's credentials: ${reading.detail}.`,
      );
    }
  }
}
