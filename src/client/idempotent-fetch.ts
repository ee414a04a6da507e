import type { ClientTracing } from './client-tracing.js';
import { type AttemptResult, sendAttempt } from './attempt.js';
import { inAttemptSpan } from './attempt-span.js';
import { backoffDelay } from './backoff.js';
import { Deadline } from './deadline.js';
import { IdempotentFetchError } from './fetch-error.js';
import { operationKey } from './operation-key.js';
import { replayableRequest } from './replayable-request.js';
import type { RetryReason } from './retry-event.js';
import { resolveRetryOptions, type RetryOptions } from './retry-options.js';
import { IDEMPOTENT_METHODS } from './retry-policy.js';
import { TIMER_MAX_MS } from '../core/option-rules.js';
import { describeCause, underlyingCause } from './underlying-cause.js';

/** `fetch`'s options, plus the operation's key and how to retry it. */
export interface IdempotentFetchInit extends RequestInit {
  /**
   * The logical operation's key, sent as `Idempotency-Key` on every attempt.
   * Default: a new version 7 UUID (time-ordered) per call for POST and PATCH, none for
   * other methods. Pass the same key again to retry an operation later (after
   * a crash, or after this call gave up).
   */
  readonly idempotencyKey?: string;
  readonly retry?: RetryOptions;
  /** The fetch to send each attempt with. Default `globalThis.fetch`. */
  readonly fetch?: typeof globalThis.fetch;
  /**
   * Traces each attempt as an HTTP client span, with `http.request.resend_count`
   * on retries, and sends the trace context: `openTelemetryTracing()` of
   * `retrysafe/otel`. Default: none.
   */
  readonly tracing?: ClientTracing;
}

/** The answer the call ended with, and how it got there. */
export interface IdempotentResult {
  /** The final response, body unread. */
  readonly response: Response;
  /** Attempts sent, the first included. */
  readonly attempts: number;
  /** The server answered with a stored outcome (`Idempotent-Replayed: true`), not a fresh execution. */
  readonly replayed: boolean;
  /** The key every attempt carried; undefined when none was sent. */
  readonly idempotencyKey: string | undefined;
  /**
   * Set when `response` is itself a retryable answer (503, 429, 409 in progress…)
   * that the call stopped retrying: attempts ran out, or the next wait, including
   * a `Retry-After`, would have passed the deadline. Undefined for a final answer.
   */
  readonly gaveUp: 'attempts-exhausted' | 'deadline-exceeded' | undefined;
}

/**
 * `fetch` for one logical operation, retried only where a retry is safe.
 *
 * - POST and PATCH carry an `Idempotency-Key` (one per call, the same on every
 *   attempt) and are retried. GET, HEAD, PUT, DELETE and OPTIONS are idempotent
 *   by definition and retried without a key. Any other method is sent once,
 *   unless the caller supplies a key, vouching that the server deduplicates it.
 * - Retried: network errors, attempt timeouts, 425, 429, 502, 503, 504, and a
 *   409 that reports an in-flight duplicate. Never retried: 500 and every
 *   other 4xx (see `RETRYABLE_STATUSES`).
 * - Waits are exponential backoff with full jitter; a `Retry-After` is waited
 *   for when it ends before the deadline. When it would not, the call stops at
 *   once and returns that answer (`gaveUp: 'deadline-exceeded'`).
 * - The deadline bounds the whole call: an attempt still running when it
 *   passes is aborted.
 *
 * Throws `IdempotentFetchError` only when there is no answer to return: see
 * its `code`. Any server answer, even a 503 it stopped retrying, is returned.
 * A request `fetch` itself would refuse (a bad URL, a GET with a body) throws
 * fetch's own `TypeError` before anything is sent.
 *
 * @example
 * const { response, replayed } = await idempotentFetch('https://shop.example/orders', {
 *   method: 'POST',
 *   headers: { 'content-type': 'application/json' },
 *   body: JSON.stringify({ cartId: 'cart_123', cartVersion: 7 }),
 *   retry: { deadlineMs: 10_000 },
 * });
 */
export async function idempotentFetch(
  input: RequestInfo | URL,
  init: IdempotentFetchInit = {},
): Promise<IdempotentResult> {
  const { idempotencyKey: givenKey, retry, fetch = globalThis.fetch, tracing, ...requestInit } = init;
  const options = resolveRetryOptions(retry);
  const request = await replayableRequest(input, requestInit, givenKey);
  const idempotencyKey = operationKey(request.method, givenKey, request.headers);
  const retried = idempotencyKey !== undefined || IDEMPOTENT_METHODS.has(request.method);
  const maxAttempts = retried ? options.attempts : 1;
  const callerSignals = [
    input instanceof Request ? input.signal : undefined,
    requestInit.signal ?? undefined,
    options.signal,
  ].filter((s) => s !== undefined);
  const deadline = new Deadline(options.deadlineMs, callerSignals, options.clock);
  const fail = (
    code: IdempotentFetchError['code'],
    message: string,
    attempts: number,
    cause: unknown,
  ): IdempotentFetchError => new IdempotentFetchError(code, message, { attempts, idempotencyKey, cause });
  const stopped = (sent: number): IdempotentFetchError =>
    deadline.stopReason() === 'deadline-exceeded'
      ? fail('deadline-exceeded', `The deadline passed after ${attempts(sent)}.`, sent, deadline.signal.reason)
      : fail('aborted', `The call was aborted after ${attempts(sent)}.`, sent, deadline.signal.reason);
  const finish = (
    result: AttemptResult & { kind: 'answered' },
    attempts: number,
    gaveUp: IdempotentResult['gaveUp'],
  ): IdempotentResult => ({
    response: result.response,
    attempts,
    replayed: result.response.headers.get('idempotent-replayed')?.trim().toLowerCase() === 'true',
    idempotencyKey,
    gaveUp,
  });

  try {
    for (let attempt = 1; ; attempt += 1) {
      if (deadline.signal.aborted) throw stopped(attempt - 1);
      const result = await inAttemptSpan(tracing, request, attempt, () =>
        sendAttempt({
          request,
          idempotencyKey,
          fetch,
          timeoutMs: options.attemptTimeoutMs,
          deadline,
          callerSignals,
          inject: tracing?.inject,
        }),
      );
      if (result.kind === 'stopped') throw stopped(attempt);
      if (result.kind === 'answered' && !result.verdict.retry) return finish(result, attempt, undefined);
      if (attempt >= maxAttempts) {
        if (result.kind === 'answered') return finish(result, attempt, 'attempts-exhausted');
        const cause = underlyingCause(result.error);
        throw fail(
          'attempts-exhausted',
          `All ${attempts(attempt)} failed without an answer (${result.reason}: ${describeCause(cause)}).`,
          attempt,
          cause,
        );
      }
      const jitter = backoffDelay(attempt - 1, options, options.random);
      const wait = Math.max(askedWait(result), jitter);
      // Waiting past the deadline only to be cut off would waste the time: stop now with what we have.
      if (wait >= Math.min(deadline.remainingMs(), TIMER_MAX_MS)) {
        if (result.kind === 'answered') return finish(result, attempt, 'deadline-exceeded');
        const cause = underlyingCause(result.error);
        throw fail(
          'deadline-exceeded',
          `The next attempt could not start before the deadline; ${attempts(attempt)} failed (${result.reason}: ${describeCause(cause)}).`,
          attempt,
          cause,
        );
      }
      if (result.kind === 'answered') await result.discard();
      options.onRetry?.({ ...retryReason(result), attempt, delayMs: wait, idempotencyKey });
      if (!(await deadline.sleep(wait))) throw stopped(attempt);
    }
  } finally {
    deadline.dispose();
  }
}

/** `1 attempt`, `3 attempts`. */
function attempts(count: number): string {
  return `${count} attempt${count === 1 ? '' : 's'}`;
}

/** What `onRetry` is told about an attempt that is retried. */
function retryReason(result: Exclude<AttemptResult, { kind: 'stopped' }>): RetryReason {
  if (result.kind === 'failed') return { reason: result.reason, error: result.error };
  return {
    reason: 'status',
    status: result.response.status,
    retryAfterMs: result.verdict.retry ? result.verdict.retryAfterMs : undefined,
  };
}

/** The wait a retryable answer asked for with `Retry-After`; 0 when it did not. */
function askedWait(result: AttemptResult): number {
  return result.kind === 'answered' && result.verdict.retry ? (result.verdict.retryAfterMs ?? 0) : 0;
}
