/**
 * A small typed client for the fake payment provider.
 *
 * Every answer the provider gives comes back as a value; only a failure to get
 * an answer (connection refused or reset, timeout, abort, a cut-off body)
 * throws, as `ProviderNetworkError`. That split is the one that matters for a
 * charge: an answer says what happened, a thrown error means the outcome is
 * unknown and must be reconciled (retry with the same key, or `lookup`).
 */
import { problemTypeBase, type Charge } from './charges.js';
import type { Control } from './faults.js';

export type { Charge } from './charges.js';

export interface Problem {
  readonly type: string;
  readonly status?: number;
  readonly detail?: string;
}

export interface ChargeInput {
  readonly idempotencyKey: string;
  /** Sent as `Fencing-Token`; the provider refuses it when it has seen a higher one for the key. */
  readonly fencingToken?: number;
  readonly amountCents: number;
  readonly currency: string;
  readonly reference: string;
}

export type ChargeResult =
  /** Money moved for this key, on this call or (replayed) an earlier one. */
  | { readonly kind: 'charged'; readonly charge: Charge; readonly replayed: boolean }
  /** A 4xx: the provider refused and charged nothing on this call. Retrying the same request will not help. */
  | { readonly kind: 'rejected'; readonly status: number; readonly problem: Problem }
  /** A 5xx: the provider failed and charged nothing on this call. Retry later with the same key. */
  | { readonly kind: 'unavailable'; readonly status: number; readonly problem: Problem };

export type LookupResult =
  | { readonly kind: 'found'; readonly charge: Charge }
  | { readonly kind: 'not-found' }
  | { readonly kind: 'failed'; readonly status: number; readonly problem: Problem };

/** The request may or may not have reached the provider, and may or may not have charged. */
export class ProviderNetworkError extends Error {
  override readonly name = 'ProviderNetworkError';
}

/** The `type` of the problem answered to a request whose fencing token is stale. */
export const staleFencingTokenType = `${problemTypeBase}stale-fencing-token`;

export interface ProviderClient {
  charge(input: ChargeInput, signal?: AbortSignal): Promise<ChargeResult>;
  lookup(idempotencyKey: string, signal?: AbortSignal): Promise<LookupResult>;
}

export function providerClient(baseUrl: string): ProviderClient {
  return {
    async charge(input, signal) {
      const headers: Record<string, string> = {
        'content-type': 'application/json',
        'idempotency-key': input.idempotencyKey,
      };
      if (input.fencingToken !== undefined) headers['fencing-token'] = String(input.fencingToken);
      const body = JSON.stringify({
        amount_cents: input.amountCents,
        currency: input.currency,
        reference: input.reference,
      });
      const {
        status,
        headers: answered,
        body: answer,
      } = await exchange(`${baseUrl}/v1/charges`, { method: 'POST', headers, body, signal });
      if (status === 200 || status === 201) {
        return { kind: 'charged', charge: answer as Charge, replayed: answered.get('idempotent-replayed') === 'true' };
      }
      return { kind: status >= 500 ? 'unavailable' : 'rejected', status, problem: asProblem(answer, status) };
    },

    async lookup(idempotencyKey, signal) {
      const url = `${baseUrl}/v1/charges?idempotency_key=${encodeURIComponent(idempotencyKey)}`;
      const { status, body } = await exchange(url, { signal });
      if (status === 200) return { kind: 'found', charge: body as Charge };
      if (status === 404) return { kind: 'not-found' };
      return { kind: 'failed', status, problem: asProblem(body, status) };
    },
  };
}

/** What tests use to observe and steer the provider; not for application code. */
export function providerAdmin(baseUrl: string) {
  const ok = async (path: string, init?: RequestInit): Promise<unknown> => {
    const { status, body } = await exchange(`${baseUrl}${path}`, init ?? {});
    if (status !== 200) throw new Error(`${init?.method ?? 'GET'} ${path} answered ${status}: ${JSON.stringify(body)}`);
    return body;
  };
  const post = (body?: unknown): RequestInit => ({
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body ?? {}),
  });
  return {
    /** How many times money moved for the key. */
    count: async (idempotencyKey: string) =>
      ((await ok(`/v1/charges/count?idempotency_key=${encodeURIComponent(idempotencyKey)}`)) as { count: number })
        .count,
    /** `held`: requests a `hold` fault keeps waiting for a `release` now. */
    stats: async () => (await ok('/v1/stats')) as { charges: number; requests: number; held: number },
    control: async (control: Control) => {
      await ok('/control', post(control));
    },
    clearCharges: async () => {
      await ok('/control/clear-charges', post());
    },
  };
}

/** One request and its whole answer; throws only when there is no complete answer. */
async function exchange(url: string, init: RequestInit): Promise<{ status: number; headers: Headers; body: unknown }> {
  try {
    const response = await fetch(url, init);
    const text = await response.text();
    return {
      status: response.status,
      headers: response.headers,
      body: text === '' ? undefined : (JSON.parse(text) as unknown),
    };
  } catch (error) {
    throw new ProviderNetworkError(`no complete answer from ${url}: ${describe(error)}`, { cause: error });
  }
}

function asProblem(body: unknown, status: number): Problem {
  return typeof body === 'object' && body !== null && typeof (body as Problem).type === 'string'
    ? (body as Problem)
    : { type: 'about:blank', status };
}

function describe(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  return error.cause instanceof Error ? `${error.message} (${error.cause.message})` : error.message;
}
