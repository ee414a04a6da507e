/** An HTTP answer as the checker compares it. */
export interface Answer {
  readonly status: number;
  /** Lower-case names; a repeated header's values joined with ", ". */
  readonly headers: Readonly<Record<string, string>>;
  readonly body: Buffer;
}

/** The marker Stripe sends on a replayed answer. */
export const REPLAY_MARKER = 'idempotent-replayed';

/**
 * A 422 that says the key was already used with another request. A problem
 * document whose `type` names something else (a business rule such as an
 * unknown cart) is the operation's own answer, not a refused key.
 */
export function isKeyReuse(answer: Answer): boolean {
  if (answer.status !== 422) return false;
  const type = problemType(answer);
  return type === undefined || /idempoten|fingerprint|reuse|mismatch/i.test(type);
}

function problemType(answer: Answer): string | undefined {
  if (!/problem\+json/i.test(answer.headers['content-type'] ?? '')) return undefined;
  try {
    const document = JSON.parse(answer.body.toString('utf8')) as { type?: unknown };
    return typeof document.type === 'string' ? document.type : undefined;
  } catch {
    return undefined;
  }
}

/** The same status and the same body bytes. */
export function sameAnswer(a: Answer, b: Answer): boolean {
  return a.status === b.status && a.body.equals(b.body);
}

export function isReplayed(answer: Answer): boolean {
  return answer.headers[REPLAY_MARKER]?.trim().toLowerCase() === 'true';
}

export function isSuccess(answer: Answer): boolean {
  return answer.status >= 200 && answer.status < 300;
}

/** A duplicate of a request still running: 409 with a hint when to retry. */
export function isInProgress(answer: Answer): boolean {
  return answer.status === 409 && answer.headers['retry-after'] !== undefined;
}

/**
 * A 409 without `Retry-After` on a fresh key: the business refused the input
 * itself (say, one order per cart), which waiting will not change.
 */
export function isBusinessDuplicate(answer: Answer): boolean {
  return answer.status === 409 && answer.headers['retry-after'] === undefined;
}

/** `Retry-After` in milliseconds, from seconds or an HTTP date; undefined when absent or unreadable. */
export function retryAfterMs(answer: Answer, now: number = Date.now()): number | undefined {
  const value = answer.headers['retry-after']?.trim();
  if (value === undefined || value === '') return undefined;
  if (/^\d+$/.test(value)) return Number(value) * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

/**
 * Whether two independent operations would answer differently: the answer
 * points at a resource through `Location` or an `id` member (at the top level
 * or one level down).
 */
export function namesResource(answer: Answer): boolean {
  if (answer.headers.location !== undefined) return true;
  let document: unknown;
  try {
    document = JSON.parse(answer.body.toString('utf8'));
  } catch {
    return false;
  }
  if (hasId(document)) return true;
  return typeof document === 'object' && document !== null && Object.values(document).some(hasId);
}

function hasId(value: unknown): boolean {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && 'id' in value;
}

/** `201`, `201 replayed`, `409 with Retry-After`: how answers are grouped in evidence. */
export function answerLabel(answer: Answer): string {
  const parts = [String(answer.status)];
  if (answer.headers['retry-after'] !== undefined) parts.push('with Retry-After');
  if (isReplayed(answer)) parts.push('replayed');
  return parts.join(' ');
}
