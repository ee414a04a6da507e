import type { ProbeResult } from './check-report.js';
import type { ProbeContext, Tenant } from './probe-context.js';

/** Statuses that refuse the credentials themselves: they say nothing about how keys are handled. */
const DENIED = new Set([401, 403]);

/** The credentials whose refusal says nothing about keys; another principal's or a revoked credential's refusal is what its probe expects. */
type Watched = Extract<Tenant, 'first' | 'second'>;

const FLAG: Readonly<Record<Watched, string>> = { first: '--header', second: '--other-header' };
const WHOSE: Readonly<Record<Watched, string>> = {
  first: 'the credentials given',
  second: "the second tenant's credentials",
};

/** A probe's context that notes answers refusing the credentials, and the judgement they call for. */
export interface CredentialWatch {
  readonly ctx: ProbeContext;
  /** The probe's result, or not applicable when any of its attempts was refused with 401 or 403. */
  judge(result: ProbeResult): ProbeResult;
}

/**
 * Watches one probe's attempts. An endpoint that refuses the credentials
 * refuses every request before it looks at the key, so what the probe saw
 * (a 401 where a 400 or a replay was due) is no verdict on the endpoint.
 */
export function credentialWatch(ctx: ProbeContext): CredentialWatch {
  let denied: { readonly status: number; readonly tenant: Watched } | undefined;
  return {
    ctx: {
      ...ctx,
      async attempt(attempt) {
        const exchange = await ctx.attempt(attempt);
        const tenant = attempt.tenant ?? 'first';
        if (
          denied === undefined &&
          (tenant === 'first' || tenant === 'second') &&
          exchange.kind === 'answered' &&
          DENIED.has(exchange.answer.status)
        ) {
          denied = { status: exchange.answer.status, tenant };
        }
        return exchange;
      },
    },
    judge(result) {
      if (denied === undefined || result.result === 'not-applicable') return result;
      const reason = `the endpoint answered ${denied.status} to ${WHOSE[denied.tenant]}; pass valid credentials with ${FLAG[denied.tenant]}`;
      return { probe: result.probe, rule: result.rule, evidence: result.evidence, result: 'not-applicable', reason };
    },
  };
}
