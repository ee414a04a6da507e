import { type ProblemCode, problemCatalogue } from '../answer/problems.js';
import type { KeyLimits } from '../key.js';
import type { OperationMode } from '../record.js';
import type { Retention } from '../retention.js';

/**
 * What a client needs to know of one route's idempotency, from the route's
 * own settings: the published specification the IETF draft asks a resource
 * for, expiry included. Plain data, so the OpenAPI fragment and the page are
 * made from the same facts.
 */
export interface RouteSpecification {
  /** `name@version`. */
  readonly operation: string;
  readonly mode: OperationMode;
  /** Whether a `POST` or `PATCH` without a key is refused (400) or runs without deduplication. */
  readonly keyRequired: boolean;
  /** Whether the route reads the key from the `Idempotency-Key` header or from elsewhere in the request (its `key` callback). */
  readonly keySource: 'header' | 'route';
  readonly keyLimits: KeyLimits;
  /**
   * How long the response is replayed, then its tombstone answers 410;
   * `perOperation` when a function decides it (these are then the defaults).
   */
  readonly retention: Retention & { readonly perOperation: boolean };
  /** What a reused key must match: the default (method, path and query, validated input) or the route's own choice. */
  readonly fingerprint: 'default' | 'route';
  /** Whether keys are scoped per user within the tenant. */
  readonly perPrincipal: boolean;
  /** Atomic: how long a duplicate of a running attempt waits before 409. */
  readonly lockTimeoutMs?: number;
  /** The base of the problem `type` URIs. */
  readonly problemBase: string;
}

/** The problems a route can answer with on its own behalf, in the catalogue's order. */
export function refusalsOf(route: RouteSpecification): readonly ProblemCode[] {
  const never = new Set<ProblemCode>([
    'webhook-payload-invalid',
    'webhook-signature-invalid',
    'webhook-timestamp-invalid',
  ]);
  if (!route.keyRequired) never.add('idempotency-key-missing');
  if (!route.perPrincipal) never.add('key-of-another-principal');
  if (route.mode === 'atomic') never.add('outcome-unknown').add('route-failed');
  else never.add('statement-timeout').add('transaction-aborted');
  if (route.mode === 'leased') never.add('route-failed');
  return (Object.keys(problemCatalogue) as ProblemCode[]).filter((code) => !never.has(code));
}

/** A number of seconds as people say it: `86400` is `1 day`, `7200` is `2 hours`, `90` is `90 seconds`. */
export function spokenSeconds(seconds: number): string {
  const units = [
    [86_400, 'day'],
    [3600, 'hour'],
    [60, 'minute'],
  ] as const;
  for (const [size, unit] of units) {
    if (seconds >= size && seconds % size === 0) {
      const n = seconds / size;
      return `${n} ${unit}${n === 1 ? '' : 's'}`;
    }
  }
  return `${seconds} second${seconds === 1 ? '' : 's'}`;
}
