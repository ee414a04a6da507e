import { answerLabel, isInProgress, isKeyReuse, isReplayed, isSuccess, namesResource, sameAnswer } from '../answer.js';
import type { ProbeResult } from '../check-report.js';
import { exchangeLabel } from '../exchange.js';
import { Findings } from '../findings.js';
import { type Start, withoutOperation } from '../operation.js';
import { countedAttempt, type ProbeContext } from '../probe-context.js';

/**
 * Sends the concurrency probe's key and body again under the second tenant's
 * credentials. It must run as a new operation of that tenant: no replay of
 * the first tenant's answer, and one new resource in the second tenant's count.
 */
export async function tenantIsolationProbe(ctx: ProbeContext, start: Start): Promise<ProbeResult> {
  const findings = new Findings('tenant-isolation');
  if (ctx.plan.otherHeaders === undefined)
    return findings.notApplicable("needs a second tenant's credentials (--other-header)");
  if (start.kind !== 'started') return withoutOperation(findings, start);
  const { key, body, uuid, original } = start.operation;
  const { exchange, before, after } = await countedAttempt(ctx, uuid, { tenant: 'second', keys: [key], body });
  findings.saw(`first tenant: ${answerLabel(original)}`);
  findings.saw(`second tenant: ${exchangeLabel(exchange)}`);
  if (exchange.kind !== 'answered') {
    findings.fail("the second tenant's request got no answer");
    findings.resources(before, after, undefined);
    return findings.result();
  }
  const { answer } = exchange;
  if (isReplayed(answer)) findings.fail('the second tenant got a replayed answer for a key it never used');
  if (sameAnswer(answer, original)) {
    if (namesResource(original))
      findings.fail("the second tenant got the first tenant's answer byte for byte, resource included");
    else
      findings.note(
        'the two answers are identical, but the first names no resource (no Location, no id), so this cannot tell them apart',
      );
  }
  if (isKeyReuse(answer)) findings.fail('the key was treated as already used with another request (422)');
  if (isInProgress(answer)) findings.fail('the key was treated as still in progress (409 with Retry-After)');
  if (!isSuccess(answer))
    findings.note(`the second tenant's request was refused (${answer.status}), so no new resource is expected`);
  findings.resources(before, after, isSuccess(answer) ? 1 : 0);
  return findings.result();
}
