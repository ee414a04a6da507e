import { setTimeout as sleep } from 'node:timers/promises';
import { type Answer, retryAfterMs } from './answer.js';
import { type Exchange, exchangeLabel } from './exchange.js';
import type { Findings } from './findings.js';
import type { ProbeContext } from './probe-context.js';

const MAX_RETRIES = 8;
/** Longest `Retry-After` honoured, so a probe stays short. */
const RETRY_AFTER_CAP_MS = 2_000;
/** Pause before a retry when the server gave no hint. */
const DEFAULT_PAUSE_MS = 200;

/** The final answer a retrying client ends with, if any, and how many retries it took. */
export interface Retried {
  readonly final: Answer | undefined;
  readonly retries: number;
}

/**
 * Retries with the same key and body as a client does after losing an
 * answer: again after no answer, any 5xx or any `Retry-After` (honoured up to
 * a cap), at most 8 times. Each retry's answer is recorded in `findings`.
 */
export async function retryUntilFinal(
  ctx: ProbeContext,
  findings: Findings,
  key: string,
  body: string,
): Promise<Retried> {
  let retries = 0;
  while (retries < MAX_RETRIES) {
    retries += 1;
    const exchange = await ctx.attempt({ keys: [key], body });
    findings.saw(`retry: ${exchangeLabel(exchange)}`);
    if (exchange.kind === 'answered' && !retryable(exchange.answer)) return { final: exchange.answer, retries };
    if (exchange.kind === 'failed' && (exchange.reason === 'deadline' || exchange.reason === 'budget')) break;
    await sleep(pause(exchange));
  }
  return { final: undefined, retries };
}

/** 409, 429 or 503 with Retry-After, any 5xx: a retrying client tries again. */
function retryable(answer: Answer): boolean {
  return answer.headers['retry-after'] !== undefined || answer.status >= 500;
}

function pause(exchange: Exchange): number {
  const hinted = exchange.kind === 'answered' ? retryAfterMs(exchange.answer) : undefined;
  return Math.min(hinted ?? DEFAULT_PAUSE_MS, RETRY_AFTER_CAP_MS);
}
