import { type Answer, answerLabel, isKeyReuse, isReplayed, isSuccess, sameAnswer } from '../answer.js';
import type { ProbeResult } from '../check-report.js';
import { exchangeLabel } from '../exchange.js';
import { Findings } from '../findings.js';
import type { ProbeContext } from '../probe-context.js';

/** What one answer to the expired key says. */
type Reading =
  | { readonly kind: 'documented' }
  | { readonly kind: 'undecided'; readonly reason: string }
  | { readonly kind: 'wrong'; readonly failure: string };

/**
 * Sends a key the operator knows is past its retention, twice, with the body
 * it was first sent with. Both answers must be the documented one: an
 * expired key never runs again behind a refusal, and never runs twice. The
 * checker cannot wait out a retention, so without such a key the probe is not
 * applicable; a key still replayed proves nothing about expiry either.
 */
export async function expiredKeyProbe(ctx: ProbeContext): Promise<ProbeResult> {
  const findings = new Findings('expired-key');
  const expired = ctx.plan.expired;
  if (expired === undefined)
    return findings.notApplicable(
      'needs a key whose retention has passed (--expired-key), with the body it was first sent with (--expired-body) and the documented answer (--expired-status)',
    );
  findings.note(`documented answer for an expired key: ${expired.status}`);
  const answers: Answer[] = [];
  for (const label of ['first', 'again'] as const) {
    const exchange = await ctx.attempt({ tenant: 'expired', keys: [expired.key], body: expired.body });
    findings.saw(`${label}: ${exchangeLabel(exchange)}`);
    if (exchange.kind !== 'answered') {
      findings.fail(`the ${label === 'first' ? 'first request' : 'second request'} got no answer`);
      return findings.result();
    }
    const reading =
      label === 'first' ? readFirst(exchange.answer, expired.status) : readAgain(exchange.answer, expired.status);
    if (reading.kind === 'undecided') return findings.notApplicable(reading.reason);
    if (reading.kind === 'wrong') findings.fail(reading.failure);
    answers.push(exchange.answer);
  }
  const [first, again] = answers;
  if (first !== undefined && again !== undefined && isSuccess(first) && !sameAnswer(first, again))
    findings.fail(
      `the key ran twice: the second request got ${answerLabel(again)} with other bytes than the first, not its replay`,
    );
  return findings.result();
}

/** The first answer: a replay means the key is still kept, whatever is documented. */
function readFirst(answer: Answer, documented: number): Reading {
  if (isReplayed(answer))
    return {
      kind: 'undecided',
      reason: `the key's stored answer was replayed (${answerLabel(answer)}), so its retention has not passed: give a key past it`,
    };
  if (isKeyReuse(answer))
    return {
      kind: 'undecided',
      reason:
        'the endpoint answered 422: the body is not the one the key was first sent with; give it with --expired-body',
    };
  return judged(answer, documented);
}

/** The second answer: the documented refusal again or, where expiry makes a new operation, that operation's replay. */
function readAgain(answer: Answer, documented: number): Reading {
  if (isSuccess(answer) && documented >= 200 && documented < 300) return { kind: 'documented' };
  return judged(answer, documented);
}

function judged(answer: Answer, documented: number): Reading {
  if (answer.status === documented && !isReplayed(answer)) return { kind: 'documented' };
  const ran = isSuccess(answer) ? ': the expired key ran as a new operation' : '';
  return { kind: 'wrong', failure: `expected the documented ${documented}, got ${answerLabel(answer)}${ran}` };
}
