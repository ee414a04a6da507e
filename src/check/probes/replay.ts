import { answerLabel, isReplayed } from '../answer.js';
import type { ProbeResult } from '../check-report.js';
import { exchangeLabel } from '../exchange.js';
import { Findings } from '../findings.js';
import { type Start, withoutOperation } from '../operation.js';
import { countedAttempt, type ProbeContext } from '../probe-context.js';

/** Headers a replay must carry unchanged. */
const REPLAYED_HEADERS = ['location', 'content-type'] as const;

/**
 * Retries the concurrency probe's completed operation once more, same key and
 * body: its stored answer, and no new resource. A missing
 * `Idempotent-Replayed: true` is only a warning: the IETF draft does not
 * require the marker, Stripe sends it.
 */
export async function replayProbe(ctx: ProbeContext, start: Start): Promise<ProbeResult> {
  const findings = new Findings('replay');
  if (start.kind !== 'started') return withoutOperation(findings, start);
  const { key, body, uuid, original } = start.operation;
  findings.saw(`original: ${answerLabel(original)}`);
  const { exchange, before, after } = await countedAttempt(ctx, uuid, { keys: [key], body });
  findings.saw(`retry: ${exchangeLabel(exchange)}`);
  // A replay sent while the operation runs again is still a second effect.
  findings.resources(before, after, 0);
  findings.note(
    'compared with the original: status, body bytes, Location, Content-Type; Set-Cookie must not be replayed',
  );
  if (exchange.kind !== 'answered') {
    findings.fail('the retry got no answer');
    return findings.result();
  }
  const retry = exchange.answer;
  if (retry.status !== original.status) findings.fail(`the status changed from ${original.status} to ${retry.status}`);
  if (!retry.body.equals(original.body)) findings.fail('the body bytes differ from the original');
  for (const name of REPLAYED_HEADERS) {
    const was = original.headers[name];
    const is = retry.headers[name];
    if (was !== is) findings.fail(`${name} changed from ${shown(was)} to ${shown(is)}`);
  }
  judgeCookie(findings, original.headers['set-cookie'], retry.headers['set-cookie']);
  if (!isReplayed(retry))
    findings.warn('no "Idempotent-Replayed: true" marker (Stripe sends it; the IETF draft does not require it)');
  return findings.result();
}

/**
 * A stored Set-Cookie hands the first caller's session to whoever replays the
 * key, and re-sets a stale one for the caller itself: it is never replayed. A
 * different cookie is the server's own for this answer (a load balancer's, say).
 */
function judgeCookie(findings: Findings, original: string | undefined, replayed: string | undefined): void {
  if (original === undefined) findings.note('the original set no cookie, so a replayed cookie could not be seen');
  else if (replayed === original)
    findings.fail(`the replay carries Set-Cookie stored from the original answer (${original})`);
  else if (replayed !== undefined) findings.warn('the replay sets a cookie of its own');
}

function shown(value: string | undefined): string {
  return value === undefined ? 'absent' : `"${value}"`;
}
