import { answerLabel, isBusinessDuplicate, isKeyReuse, sameAnswer } from '../answer.js';
import type { ProbeResult } from '../check-report.js';
import { equivalentJson } from '../equivalent-json.js';
import { exchangeLabel } from '../exchange.js';
import { Findings } from '../findings.js';
import { type Start, withoutOperation } from '../operation.js';
import { countedAttempt, type ProbeContext } from '../probe-context.js';

/**
 * Retries the concurrency probe's completed operation with its body written
 * otherwise: the same JSON, its objects' members in reverse order and other
 * white space. The same input, so the same operation: the original answer,
 * nothing run again, and no 422 for a payload that differs only in its bytes.
 */
export async function equivalentBodyProbe(ctx: ProbeContext, start: Start): Promise<ProbeResult> {
  const findings = new Findings('equivalent-body');
  if (start.kind !== 'started') return withoutOperation(findings, start);
  const { operation } = start;
  const equivalent = equivalentJson(operation.body);
  if (equivalent.kind === 'not-rewritable') return findings.notApplicable(equivalent.reason);
  findings.note(equivalent.change);
  const { exchange, before, after } = await countedAttempt(ctx, operation.uuid, {
    keys: [operation.key],
    body: equivalent.text,
  });
  findings.saw(exchangeLabel(exchange));
  if (exchange.kind !== 'answered') findings.fail('the request got no answer');
  else {
    const { answer } = exchange;
    if (isKeyReuse(answer))
      findings.fail(
        'refused with 422 as a different payload: the fingerprint is taken over the bytes of the body, not over the input they mean',
      );
    else if (isBusinessDuplicate(answer))
      findings.fail(
        `run again as a new operation, which met the business rule (${answerLabel(answer)}): the fingerprint or the lookup is taken over the bytes of the body`,
      );
    else if (!sameAnswer(answer, operation.original))
      findings.fail(`expected the original answer (${answerLabel(operation.original)}), got ${answerLabel(answer)}`);
  }
  findings.resources(before, after, 0);
  return findings.result();
}
