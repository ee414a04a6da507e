import { answerLabel, isBusinessDuplicate, isReplayed, isSuccess, sameAnswer } from '../answer.js';
import { fillTemplate } from '../body-template.js';
import type { ProbeResult } from '../check-report.js';
import { exchangeLabel } from '../exchange.js';
import { Findings } from '../findings.js';
import { BUSINESS_DUPLICATE_REASON } from '../operation.js';
import type { ProbeContext, Reading } from '../probe-context.js';
import { retryUntilFinal } from '../retry-until-final.js';

/**
 * A client with a short time-out: it gives up its first attempt just after
 * writing it, then retries with the same key (honouring Retry-After, up to a
 * cap) until it gets a final answer. One effect, and that answer is the
 * original or a replay of it.
 */
export async function slowClientProbe(ctx: ProbeContext): Promise<ProbeResult> {
  const findings = new Findings('slow-client');
  const uuid = ctx.uuid();
  const key = ctx.uuid();
  const body = fillTemplate(ctx.plan.body, uuid);
  const before = await ctx.count('first', uuid);
  const first = await ctx.attempt({ keys: [key], body, abandonAfterMs: ctx.plan.abandonAfterMs });
  findings.saw(`first attempt: ${exchangeLabel(first)}`);
  if (first.kind === 'answered')
    findings.note(`the server answered within ${ctx.plan.abandonAfterMs} ms, before the client gave up`);
  const { final, retries } = await retryUntilFinal(ctx, findings, key, body);
  const after = await ctx.count('first', uuid);
  findings.note(`${retries} ${retries === 1 ? 'retry' : 'retries'} with the same key`);
  if (final === undefined) {
    findings.fail(`no final answer after ${retries} retries`);
    findings.resources(before, after, undefined);
    return findings.result();
  }
  if (isBusinessDuplicate(final)) return businessDuplicate(findings, before, after);
  if (!isSuccess(final)) findings.fail(`the final answer was ${answerLabel(final)}`);
  else
    findings.note(
      isReplayed(final)
        ? 'the final answer is a replay'
        : 'the final answer is not marked as a replay: the first attempt never ran, or replays are not marked',
    );
  if (first.kind === 'answered' && !sameAnswer(final, first.answer))
    findings.fail('the final answer differs from the first attempt');
  findings.resources(before, after, 1);
  return findings.result();
}

/**
 * The retry met the business rule rather than the stored outcome. When the
 * count shows the first attempt created the resource, the key failed to
 * replay it; otherwise the input had been used before this probe.
 */
export function businessDuplicate(
  findings: Findings,
  before: Reading | undefined,
  after: Reading | undefined,
): ProbeResult {
  const created = before?.ok === true && after?.ok === true ? after.count - before.count : undefined;
  if (created === 1) {
    findings.resources(before, after, 1);
    findings.fail(
      'the first attempt created the resource, but the retry was refused as a business duplicate instead of getting its outcome',
    );
    return findings.result();
  }
  findings.resources(before, after, undefined);
  return findings.notApplicable(BUSINESS_DUPLICATE_REASON);
}
