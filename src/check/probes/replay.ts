import { answerLabel, isReplayed } from '../answer.js';
import type { ProbeResult } from '../check-report.js';
import { exchangeLabel } from '../exchange.js';
import { Findings } from '../findings.js';
import { type Start, withoutOperation } from '../operation.js';
import type { ProbeContext } from '../probe-context.js';

/** Headers a replay must carry unchanged. */
const REPLAYED_HEADERS = ['location', 'content-type'] as const;

/**
 * Retries the concurrency probe's completed operation once more, same key and
 * body. A missing `Idempotent-Replayed: true` is only a warning: the IETF
 * draft does not require the marker, Stripe sends it.
 */
export async function replayProbe(ctx: ProbeContext, start: Start): Promise<ProbeResult> {
  const findings = new Findings('replay');
  if (start.kind !== 'started') return withoutOperation(findings, start);
  const { key, body, original } = start.operation;
  findings.saw(`original: ${answerLabel(original)}`);
  const exchange = await ctx.attempt({ keys: [key], body });
  findings.saw(`retry: ${exchangeLabel(exchange)}`);
  findings.note('compared with the original: status, body bytes, Location, Content-Type');
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
  if (!isReplayed(retry)) findings.warn('no "Idempotent-Replayed: true" marker (Stripe sends it; the IETF draft does not require it)');
  return findings.result();
}

function shown(value: string | undefined): string {
  return value === undefined ? 'absent' : `"${value}"`;
}
