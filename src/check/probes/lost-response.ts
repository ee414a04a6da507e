import { setTimeout as sleep } from 'node:timers/promises';
import { answerLabel, isBusinessDuplicate, isReplayed, isSuccess, sameAnswer } from '../answer.js';
import { fillTemplate } from '../body-template.js';
import type { ProbeResult } from '../check-report.js';
import { exchangeLabel } from '../exchange.js';
import { Findings } from '../findings.js';
import type { ProbeContext, Reading } from '../probe-context.js';
import { retryUntilFinal } from '../retry-until-final.js';
import { businessDuplicate } from './slow-client.js';

/** Count reads while waiting for the first attempt's work to land. */
const MAX_POLLS = 16;
const FIRST_POLL_MS = 25;
const POLL_CAP_MS = 400;
/** Longest wait for the work to land, whatever the request time-out. */
const LANDING_CAP_MS = 10_000;

/**
 * Hang-ups tried, each with a fresh key, before the lost answer counts as not
 * exercised: a busy server may read a body only after the client's close, and
 * then drop the request unrun, a race that one try can lose.
 */
const HANG_UPS = 3;

/** What one hang-up and its retries came to. */
type HangUp =
  | { readonly kind: 'judged'; readonly result: ProbeResult }
  /** The request was never run, or whether it ran cannot be told. */
  | { readonly kind: 'unexercised'; readonly reason: string };

/**
 * The answer lost on the way back: the request is written in full, the
 * connection closed before any answer, and the work confirmed to have landed
 * (the count URL, polled for a bounded time) before the client retries with
 * the same key. One effect, and the retries get one answer: the stored one.
 */
export async function lostResponseProbe(ctx: ProbeContext): Promise<ProbeResult> {
  const findings = new Findings('lost-response');
  for (let tried = 1; ; tried += 1) {
    const hangUp = await hangUpAndRetry(ctx, findings);
    if (hangUp.kind === 'judged') return hangUp.result;
    if (tried === HANG_UPS) return findings.notApplicable(hangUp.reason);
    findings.within(`hang-up ${tried + 1}`);
    findings.note(
      `the endpoint did not run ${tried === 1 ? 'a request' : `${tried} requests`} whose client hung up: hanging up again with a fresh key`,
    );
  }
}

async function hangUpAndRetry(ctx: ProbeContext, findings: Findings): Promise<HangUp> {
  const uuid = ctx.uuid();
  const key = ctx.uuid();
  const body = fillTemplate(ctx.plan.body, uuid);
  const before = await ctx.count('first', uuid);
  const first = await ctx.attempt({ keys: [key], body, hangUp: true });
  findings.saw(`first attempt: ${exchangeLabel(first)}`);
  if (first.kind === 'failed') {
    findings.fail(`the first attempt could not be written: ${exchangeLabel(first)}`);
    return judged(findings);
  }
  const landed = before?.ok === true ? await awaitLanding(ctx, uuid, before.count) : undefined;
  if (landed !== undefined)
    findings.note(
      landed
        ? "the first attempt's work landed before the retry (count URL)"
        : `the first attempt's work did not land within ${landingWaitMs(ctx)} ms`,
    );
  const { final, retries } = await retryUntilFinal(ctx, findings, key, body);
  findings.note(`${retries} ${retries === 1 ? 'retry' : 'retries'} with the same key`);
  if (final === undefined) {
    findings.fail(`no final answer after ${retries} retries`);
    findings.resources(before, await ctx.count('first', uuid), undefined);
    return judged(findings);
  }
  if (isBusinessDuplicate(final))
    return { kind: 'judged', result: businessDuplicate(findings, before, await ctx.count('first', uuid)) };
  if (!isSuccess(final)) findings.fail(`the final answer was ${answerLabel(final)}`);
  // The original answer never arrived: the stored one is what every later retry gets.
  const again = await ctx.attempt({ keys: [key], body });
  findings.saw(`retry: ${exchangeLabel(again)}`);
  if (again.kind !== 'answered' || !sameAnswer(again.answer, final))
    findings.fail('two retries with the same key got different answers');
  const after = await ctx.count('first', uuid);
  findings.resources(before, after, 1);
  if (isReplayed(final))
    findings.note("the retry's answer is a replay: the first attempt's work landed and its answer was kept");
  if (findings.failed) return judged(findings);
  if (landed === false)
    return {
      kind: 'unexercised',
      reason: `the endpoint did not run a request whose client hung up once it was written (${HANG_UPS} tried, each with a fresh key), so no lost answer was exercised`,
    };
  if (landed === undefined && !isReplayed(final)) {
    return {
      kind: 'unexercised',
      reason:
        "cannot tell whether the first attempt's work landed: give --count-url, or mark replays with Idempotent-Replayed: true",
    };
  }
  return judged(findings);
}

function judged(findings: Findings): HangUp {
  return { kind: 'judged', result: findings.result() };
}

/** Reads the count with growing pauses until it rises above `before` or the wait is over. */
async function awaitLanding(ctx: ProbeContext, uuid: string, before: number): Promise<boolean> {
  const until = Date.now() + landingWaitMs(ctx);
  let pause = FIRST_POLL_MS;
  for (let poll = 0; poll < MAX_POLLS && Date.now() < until; poll += 1) {
    await sleep(pause);
    const reading: Reading | undefined = await ctx.count('first', uuid);
    if (reading?.ok === true && reading.count > before) return true;
    if (reading?.ok !== true) return false;
    pause = Math.min(pause * 2, POLL_CAP_MS);
  }
  return false;
}

function landingWaitMs(ctx: ProbeContext): number {
  return Math.min(ctx.plan.timeoutMs, LANDING_CAP_MS);
}
