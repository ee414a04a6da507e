import { answerLabel, sameAnswer } from '../answer.js';
import { type DerivedBody, deriveOtherBody, fillTemplate } from '../body-template.js';
import type { ProbeResult } from '../check-report.js';
import { exchangeLabel } from '../exchange.js';
import { Findings } from '../findings.js';
import { type Operation, type Start, withoutOperation } from '../operation.js';
import type { ProbeContext } from '../probe-context.js';

const OTHER_BODY_HINT = 'if the server ignores this change or finds it invalid, give a different valid body with --other-body';

/** Reuses the concurrency probe's key with a different body: 422 expected, and nothing created. */
export async function mismatchProbe(ctx: ProbeContext, start: Start): Promise<ProbeResult> {
  const findings = new Findings('mismatch');
  if (start.kind !== 'started') return withoutOperation(findings, start);
  const { operation } = start;
  const other = otherBody(ctx.plan.otherBody, operation);
  if (other.kind === 'underivable') return findings.notApplicable(other.reason);
  findings.note(other.change);
  const before = await ctx.count('first', operation.uuid);
  const exchange = await ctx.attempt({ keys: [operation.key], body: other.body });
  const after = await ctx.count('first', operation.uuid);
  findings.saw(exchangeLabel(exchange));
  if (exchange.kind !== 'answered') {
    findings.fail('the request got no answer');
  } else if (exchange.answer.status !== 422) {
    const { answer } = exchange;
    const replayed = sameAnswer(answer, operation.original);
    findings.fail(replayed ? `the original answer (${answerLabel(answer)}) was replayed for a different body` : `expected 422, got ${answer.status}`);
    if (ctx.plan.otherBody === undefined && (replayed || answer.status === 400)) findings.note(OTHER_BODY_HINT);
  }
  findings.resources(before, after, 0);
  return findings.result();
}

function otherBody(template: string | undefined, operation: Operation): DerivedBody {
  if (template === undefined) return deriveOtherBody(operation.body);
  const body = fillTemplate(template, operation.uuid);
  if (body === operation.body) return { kind: 'underivable', reason: 'the other body is the same as the body' };
  return { kind: 'derived', body, change: 'the other body as given' };
}
