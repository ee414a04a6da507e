import type { Deadline } from './deadline.js';
import { IDEMPOTENCY_KEY_HEADER } from './operation-key.js';
import type { ReplayableRequest } from './replayable-request.js';
import { classifyResponse, type Verdict } from './retry-policy.js';
import { linkAbort } from './link-abort.js';
import { armTimer } from '../core/clock.js';

/** The outcome of one attempt. */
export type AttemptResult =
  /** The server answered; `discard` frees a response that will not be returned. */
  | { readonly kind: 'answered'; readonly response: Response; readonly verdict: Verdict; discard(): Promise<void> }
  /** No answer: the connection failed or the attempt ran out of time. Retryable. */
  | { readonly kind: 'failed'; readonly reason: 'network' | 'timeout'; readonly error: unknown }
  /** The deadline passed or the caller aborted while the attempt ran. */
  | { readonly kind: 'stopped' };

export interface AttemptPlan {
  readonly request: ReplayableRequest;
  readonly idempotencyKey: string | undefined;
  readonly fetch: typeof globalThis.fetch;
  readonly timeoutMs: number;
  readonly deadline: Deadline;
  /** Stay linked to a returned response, so the caller can still abort reading its body. */
  readonly callerSignals: readonly AbortSignal[];
  /** Writes the trace context into the attempt's headers, when the call is traced. */
  readonly inject?: (headers: Headers) => void;
}

/**
 * Sends one attempt and classifies its answer. The attempt's own timeout
 * covers the wait for the headers (and the small body of a 409 it must read),
 * not the caller's later reading of the body.
 */
export async function sendAttempt(plan: AttemptPlan): Promise<AttemptResult> {
  const controller = new AbortController();
  let timedOut = false;
  const disarm = armTimer(plan.deadline.clock, plan.timeoutMs, () => {
    timedOut = true;
    controller.abort(new DOMException(`The attempt took longer than ${plan.timeoutMs} ms.`, 'TimeoutError'));
  });
  const unlinkDeadline = linkAbort(controller, [plan.deadline.signal]);
  const unlinkCaller = linkAbort(controller, plan.callerSignals);
  const headers = new Headers(plan.request.headers);
  if (plan.idempotencyKey !== undefined) headers.set(IDEMPOTENCY_KEY_HEADER, plan.idempotencyKey);
  plan.inject?.(headers);
  try {
    const response = await plan.fetch(plan.request.url, {
      ...plan.request.settings,
      method: plan.request.method,
      headers,
      body: plan.request.body ?? null,
      signal: controller.signal,
    });
    const verdict = await classifyResponse(response, plan.deadline.clock.now());
    const discard = async (): Promise<void> => {
      unlinkCaller();
      await response.body?.cancel().catch(() => {});
    };
    return { kind: 'answered', response, verdict, discard };
  } catch (error) {
    unlinkCaller();
    if (plan.deadline.signal.aborted) return { kind: 'stopped' };
    if (timedOut) return { kind: 'failed', reason: 'timeout', error };
    // The Fetch API reports every network failure, and only those once the request is built, as a TypeError.
    if (error instanceof TypeError) return { kind: 'failed', reason: 'network', error };
    throw error;
  } finally {
    disarm();
    unlinkDeadline();
  }
}
