import { type Answer, answerLabel } from '../answer.js';
import { fillTemplate } from '../body-template.js';
import type { ProbeResult } from '../check-report.js';
import { exchangeLabel } from '../exchange.js';
import { Findings } from '../findings.js';
import type { ProbeContext } from '../probe-context.js';

/**
 * A statement of expiry: a word for it followed, within a sentence or a JSON
 * member or two, by a duration with its unit, or by a member counted in
 * seconds (`"responseSeconds": 86400`). Any wording of it will do; none at
 * all is what the draft's MUST forbids.
 */
const EXPIRY =
  /(?:expir|retention|retain|kept for|purge)[\s\S]{0,160}?(?:\d+\s*(?:seconds?|minutes?|hours?|days?|weeks?|months?)\b|seconds"\s*:\s*\d+|\bP(?:T?\d+[DHMSW])+\b)/i;

/**
 * Follows the `Link: rel="describedby"` of the answer to a request without a
 * key (a 400, where the draft shows the link) to the idempotency
 * specification, on the endpoint's own origin, and reads whether it states
 * an expiry. No link is no verdict: the draft leaves where the specification
 * is published to the resource.
 */
export async function publishedSpecificationProbe(ctx: ProbeContext): Promise<ProbeResult> {
  const findings = new Findings('published-specification');
  const exchange = await ctx.attempt({ keys: [], body: fillTemplate(ctx.plan.body, ctx.uuid()) });
  findings.saw(`missing key: ${exchangeLabel(exchange)}`);
  if (exchange.kind !== 'answered') {
    findings.fail('the request without a key got no answer');
    return findings.result();
  }
  const target = describedBy(exchange.answer);
  if (target === undefined)
    return findings.notApplicable(
      `the answer to a request without a key (${answerLabel(exchange.answer)}) has no Link with rel="describedby", so the checker cannot find the idempotency specification`,
    );
  let url: URL;
  try {
    url = new URL(target, ctx.plan.url);
  } catch {
    findings.fail(`the describedby target "${target}" is not a URL`);
    return findings.result();
  }
  if (url.origin !== ctx.plan.url.origin)
    return findings.notApplicable(
      `the specification is on another origin (${url.origin}); the checker sends requests only to the endpoint's`,
    );
  findings.note(`specification: ${url.toString()}`);
  const read = await ctx.document(url);
  findings.saw(`specification: ${exchangeLabel(read)}`);
  if (read.kind !== 'answered') findings.fail('the specification got no answer');
  else if (read.answer.status !== 200) findings.fail(`the specification answered ${read.answer.status}, not 200`);
  else {
    const stated = EXPIRY.exec(read.answer.body.toString('utf8'));
    if (stated === null)
      findings.fail(
        'the specification states no expiry: no duration near "expires", "retention" or "kept for" (the draft requires the expiration policy in it)',
      );
    else findings.note(`states an expiry: "${stated[0].replace(/\s+/g, ' ').slice(0, 120)}"`);
  }
  return findings.result();
}

/** The target of the first `Link` value whose `rel` names `describedby`. */
function describedBy(answer: Answer): string | undefined {
  const link = answer.headers.link;
  if (link === undefined) return undefined;
  for (const match of link.matchAll(/<([^>]*)>([^,<]*)/g)) {
    const rel = /;\s*rel\s*=\s*(?:"([^"]*)"|([^\s;,]+))/i.exec(match[2] ?? '');
    const names = (rel?.[1] ?? rel?.[2] ?? '').toLowerCase().split(/\s+/);
    if (names.includes('describedby')) return match[1];
  }
  return undefined;
}
