import { type Answer, answerLabel, isInProgress, isReplayed, isSuccess, sameAnswer } from '../answer.js';
import { fillTemplate } from '../body-template.js';
import type { ProbeResult } from '../check-report.js';
import { type Exchange, exchangeLabel } from '../exchange.js';
import { Findings } from '../findings.js';
import { BUSINESS_DUPLICATE_REASON, classifyStart, type Start } from '../operation.js';
import type { ProbeContext } from '../probe-context.js';

/** The probe's result, and the operation its first burst started for the probes that build on it. */
export interface ConcurrencyOutcome {
  readonly result: ProbeResult;
  readonly start: Start;
}

/**
 * Fires N requests with one fresh key at once, each on its own connection,
 * in several bursts with a key each: a check-then-insert race opens on some
 * runs only. In a burst, the original is the first success to arrive that is
 * not marked as a replay; every other answer must equal it byte for byte or
 * be 409 with Retry-After. Bursting stops at the first failing burst.
 */
export async function concurrencyProbe(ctx: ProbeContext): Promise<ConcurrencyOutcome> {
  const findings = new Findings('concurrency');
  let first: Start | undefined;
  for (let burst = 1; burst <= ctx.plan.bursts; burst += 1) {
    // The first burst reads as the probe always has; later ones say which they were.
    findings.within(burst === 1 ? undefined : `burst ${burst}`);
    const start = await oneBurst(ctx, findings);
    first ??= start;
    if (start.kind === 'business-duplicate' && burst === 1)
      return { result: findings.notApplicable(BUSINESS_DUPLICATE_REASON), start };
    if (findings.failed || start.kind !== 'started') break;
  }
  findings.within(undefined);
  return { result: findings.result(), start: first ?? { kind: 'refused', label: 'no burst was sent' } };
}

async function oneBurst(ctx: ProbeContext, findings: Findings): Promise<Start> {
  const uuid = ctx.uuid();
  const key = ctx.uuid();
  const body = fillTemplate(ctx.plan.body, uuid);
  const before = await ctx.count('first', uuid);
  const arrivals: Exchange[] = [];
  const burst = Array.from({ length: ctx.plan.concurrency }, () =>
    ctx.attempt({ keys: [key], body }).then((exchange) => arrivals.push(exchange)),
  );
  await Promise.all(burst);
  const after = await ctx.count('first', uuid);

  for (const exchange of arrivals) findings.saw(exchangeLabel(exchange));
  const answers = arrivals.flatMap((exchange) => (exchange.kind === 'answered' ? [exchange.answer] : []));
  findings.note(
    `${arrivals.length} requests with one key; ${distinct(answers)} distinct answers (status and body bytes)`,
  );
  const original = pickOriginal(answers);
  const start: Start =
    original === undefined
      ? { kind: 'refused', label: 'no completed answer' }
      : classifyStart(key, uuid, body, { kind: 'answered', answer: original });
  if (start.kind === 'business-duplicate') {
    findings.resources(before, after, undefined);
    return start;
  }

  if (original === undefined)
    findings.fail(
      answers.length === 0 ? 'no request got an answer' : 'no request completed: every answer was 409 with Retry-After',
    );
  else if (start.kind === 'refused')
    findings.fail(`the endpoint did not accept the request (${start.label}); check the body and the credentials`);
  const unanswered = arrivals.length - answers.length;
  if (unanswered > 0) findings.fail(`${unanswered} of ${arrivals.length} requests got no answer`);
  if (original !== undefined) {
    const odd = answers.filter(
      (answer) => answer !== original && !sameAnswer(answer, original) && !isInProgress(answer),
    );
    if (odd.length > 0)
      findings.fail(
        `${odd.length} answers were neither the original (${answerLabel(original)}) byte for byte nor 409 with Retry-After`,
      );
  }
  findings.resources(before, after, start.kind === 'started' ? 1 : undefined);
  return start;
}

function pickOriginal(answers: readonly Answer[]): Answer | undefined {
  return (
    answers.find((answer) => isSuccess(answer) && !isReplayed(answer)) ??
    answers.find(isSuccess) ??
    answers.find((answer) => !isInProgress(answer))
  );
}

function distinct(answers: readonly Answer[]): number {
  return new Set(answers.map((answer) => `${answer.status} ${answer.body.toString('base64')}`)).size;
}
