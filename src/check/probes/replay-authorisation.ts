import { answerLabel, isReplayed, isSuccess, namesResource } from '../answer.js';
import type { ProbeName, ProbeResult } from '../check-report.js';
import { exchangeLabel } from '../exchange.js';
import { Findings } from '../findings.js';
import { type Start, withoutOperation } from '../operation.js';
import type { ProbeContext, Tenant } from '../probe-context.js';

/** Who retries the first user's key, and what a failure says. */
interface Intruder {
  readonly probe: Extract<ProbeName, 'other-principal' | 'revoked-credential'>;
  readonly tenant: Extract<Tenant, 'principal' | 'revoked'>;
  readonly missing: string;
  readonly who: string;
  /** The failure when the first user's answer reached it. */
  readonly leak: string;
  /** Whether a fresh success (a new operation) is acceptable. */
  readonly mayRun: boolean;
}

const otherPrincipal: Intruder = {
  probe: 'other-principal',
  tenant: 'principal',
  missing: 'needs the credentials of another user of the first tenant (--principal-header)',
  who: 'another principal',
  leak: "another principal got the first principal's answer",
  mayRun: true,
};

const revokedCredential: Intruder = {
  probe: 'revoked-credential',
  tenant: 'revoked',
  missing: 'needs a revoked or expired credential of the first user (--revoked-header)',
  who: 'a revoked credential',
  leak: 'a revoked credential got the stored answer',
  mayRun: false,
};

/** Another user of the tenant retries the first user's key: any refusal or a new operation, never the first user's answer. */
export function otherPrincipalProbe(ctx: ProbeContext, start: Start): Promise<ProbeResult> {
  return retryAs(ctx, start, otherPrincipal);
}

/** The first user's revoked credential retries its key: refused, never the stored answer. */
export function revokedCredentialProbe(ctx: ProbeContext, start: Start): Promise<ProbeResult> {
  return retryAs(ctx, start, revokedCredential);
}

/**
 * Authorisation is checked on every request, replays included: a stored
 * answer goes only to a caller who may see it now. Judged by HTTP alone:
 * the answer must not carry the original's body when that names a resource,
 * nor be marked as a replay.
 */
async function retryAs(ctx: ProbeContext, start: Start, intruder: Intruder): Promise<ProbeResult> {
  const findings = new Findings(intruder.probe);
  if ((intruder.tenant === 'principal' ? ctx.plan.principalHeaders : ctx.plan.revokedHeaders) === undefined)
    return findings.notApplicable(intruder.missing);
  if (start.kind !== 'started') return withoutOperation(findings, start);
  const { key, body, original } = start.operation;
  const exchange = await ctx.attempt({ tenant: intruder.tenant, keys: [key], body });
  findings.saw(`first user: ${answerLabel(original)}`);
  findings.saw(`${intruder.who}: ${exchangeLabel(exchange)}`);
  if (exchange.kind !== 'answered') {
    findings.fail(`the request of ${intruder.who} got no answer`);
    return findings.result();
  }
  const { answer } = exchange;
  const sameBody = answer.body.equals(original.body);
  if (isReplayed(answer)) findings.fail(`${intruder.leak}, marked as a replay`);
  else if (sameBody && namesResource(original))
    findings.fail(`${intruder.leak}, its body byte for byte, resource included`);
  else if (sameBody)
    findings.note(
      "the answer's body equals the original, but the original names no resource (no Location, no id), so this cannot tell them apart",
    );
  else if (isSuccess(answer) && !intruder.mayRun) findings.fail(`${intruder.who} was accepted (${answer.status})`);
  else
    findings.note(
      isSuccess(answer) ? `ran as an operation of its own (${answer.status})` : `refused (${answer.status})`,
    );
  return findings.result();
}
