import { answerLabel, sameAnswer } from '../answer.js';
import { deriveOtherBody, fillTemplate, MARKER_MEMBER, UUID_TOKEN } from '../body-template.js';
import type { ProbeResult } from '../check-report.js';
import { exchangeLabel } from '../exchange.js';
import { Findings } from '../findings.js';
import { type Operation, type Start, withoutOperation } from '../operation.js';
import { countedAttempt, type ProbeContext } from '../probe-context.js';

const OTHER_BODY_HINT =
  'if the server ignores this change or finds it invalid, give a different valid body with --other-body';

/** The different body, and whether the route surely sees the change. */
type OtherBody =
  | {
      readonly kind: 'other';
      readonly body: string;
      /** The UUID a resource created from it would carry. */
      readonly uuid: string;
      readonly change: string;
      /** False for an added member, which a validator may drop before the fingerprint. */
      readonly seen: boolean;
    }
  | { readonly kind: 'underivable'; readonly reason: string };

/**
 * Reuses the concurrency probe's key with a different body: 422 expected, and
 * nothing created; then the original body once more, which still gets its
 * original answer.
 */
export async function mismatchProbe(ctx: ProbeContext, start: Start): Promise<ProbeResult> {
  const findings = new Findings('mismatch');
  if (start.kind !== 'started') return withoutOperation(findings, start);
  const { operation } = start;
  const other = otherBody(ctx, operation);
  if (other.kind === 'underivable') return findings.notApplicable(other.reason);
  findings.note(other.change);
  const { exchange, before, after } = await countedAttempt(ctx, other.uuid, {
    keys: [operation.key],
    body: other.body,
  });
  findings.saw(exchangeLabel(exchange));
  if (exchange.kind !== 'answered') {
    findings.fail('the request got no answer');
  } else if (exchange.answer.status !== 422) {
    const { answer } = exchange;
    const replayed = sameAnswer(answer, operation.original);
    // A replay or a 400 for a member the route may never see says nothing about the fingerprint.
    if (!other.seen && (replayed || answer.status === 400)) {
      return findings.notApplicable(
        `the server ${replayed ? 'replayed the original' : 'answered 400'} when ${MARKER_MEMBER} was added, which it may drop or refuse; give a different valid body with --other-body`,
      );
    }
    findings.fail(
      replayed
        ? `the original answer (${answerLabel(answer)}) was replayed for a different body`
        : `expected 422, got ${answer.status}`,
    );
    if (ctx.plan.otherBody === undefined && (replayed || answer.status === 400)) findings.note(OTHER_BODY_HINT);
  }
  findings.resources(before, after, 0);
  if (exchange.kind === 'answered' && exchange.answer.status === 422)
    await originalStillAnswered(ctx, findings, operation);
  return findings.result();
}

/** After the refusal, the key still answers its own body with the original: the 422 was not stored in its place. */
async function originalStillAnswered(ctx: ProbeContext, findings: Findings, operation: Operation): Promise<void> {
  const again = await ctx.attempt({ keys: [operation.key], body: operation.body });
  findings.saw(`the original body again: ${exchangeLabel(again)}`);
  if (again.kind !== 'answered') findings.fail('the original body again got no answer');
  else if (!sameAnswer(again.answer, operation.original))
    findings.fail(
      `the original body then got ${answerLabel(again.answer)}, not its original answer (${answerLabel(operation.original)}): the refusal was stored in its place`,
    );
}

/**
 * The body given with --other-body; else the template filled with another
 * UUID, the input the template already varies and the route surely reads;
 * else the body with its first number changed, or with a member added.
 */
function otherBody(ctx: ProbeContext, operation: Operation): OtherBody {
  const { otherBody: template, body } = ctx.plan;
  if (template !== undefined) {
    const filled = fillTemplate(template, operation.uuid);
    if (filled === operation.body) return { kind: 'underivable', reason: 'the other body is the same as the body' };
    return { kind: 'other', body: filled, uuid: operation.uuid, change: 'the other body as given', seen: true };
  }
  if (body.includes(UUID_TOKEN)) {
    const uuid = ctx.uuid();
    return {
      kind: 'other',
      body: fillTemplate(body, uuid),
      uuid,
      change: `${UUID_TOKEN} filled with another UUID`,
      seen: true,
    };
  }
  const derived = deriveOtherBody(operation.body);
  if (derived.kind === 'underivable') return derived;
  return {
    kind: 'other',
    body: derived.body,
    uuid: operation.uuid,
    change: derived.change,
    seen: !derived.change.includes(MARKER_MEMBER),
  };
}
