import { parseHttpDate } from './http-date.js';

/**
 * How long a `Retry-After` header asks the client to wait, in milliseconds:
 * delta-seconds (`120`) or an HTTP-date (never negative: a date in the past
 * means now). Undefined when the header is absent or not either form.
 */
export function parseRetryAfter(value: string | null | undefined, now: number = Date.now()): number | undefined {
  if (value === null || value === undefined) return undefined;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1000;
  const at = parseHttpDate(trimmed, now);
  return at === undefined ? undefined : Math.max(0, at - now);
}
