import { randomUUID } from 'node:crypto';
import { fillTemplate } from './body-template.js';
import type { CheckPlan } from './check-options.js';
import { type Exchange, failed, type HeaderLine, type OutgoingRequest } from './exchange.js';
import { sendHttp } from './http-exchange.js';
import { sendRaw } from './raw-exchange.js';
import type { RequestBudget } from './request-budget.js';
import { countResources } from './resource-count.js';

/**
 * Whose credentials a request carries: `--header`, `--other-header`, or
 * another user of the first tenant (`--principal-header`), or the first
 * user's revoked credential (`--revoked-header`), or the user of the expired
 * key (`--expired-header`, default `--header`).
 */
export type Tenant = 'first' | 'second' | 'principal' | 'revoked' | 'expired';

/** One attempt at the endpoint's operation. */
export interface Attempt {
  /** Default `first`. */
  readonly tenant?: Tenant;
  /** `Idempotency-Key` values, as byte strings: none sends no header, two send it twice. */
  readonly keys: readonly string[];
  readonly body: string;
  readonly abandonAfterMs?: number;
  /** Write the request byte for byte on a raw socket. */
  readonly raw?: boolean;
  /** Close the connection as soon as the request is written, before any answer: implies `raw`. */
  readonly hangUp?: boolean;
}

/** A count URL reading. */
export type Reading = { readonly ok: true; readonly count: number } | { readonly ok: false; readonly detail: string };

/** What every probe works with. */
export interface ProbeContext {
  readonly plan: CheckPlan;
  attempt(attempt: Attempt): Promise<Exchange>;
  /** Reads the count URL (its `{{uuid}}` filled with `uuid`); undefined when there is none. */
  count(tenant: Tenant, uuid: string): Promise<Reading | undefined>;
  /** Reads a document the endpoint links to (`GET`, with the first tenant's credentials). */
  document(url: URL): Promise<Exchange>;
  /** A fresh UUID, for a key or a body. */
  readonly uuid: () => string;
}

export function probeContext(plan: CheckPlan, budget: RequestBudget): ProbeContext {
  const send = (request: Omit<OutgoingRequest, 'signal' | 'timeoutMs'>, raw: boolean): Promise<Exchange> => {
    const spent = budget.spend();
    if (spent !== 'ok')
      return Promise.resolve(
        failed(spent, spent === 'deadline' ? 'the check deadline passed' : 'the request budget is spent'),
      );
    const outgoing = { ...request, timeoutMs: plan.timeoutMs, signal: budget.signal };
    return raw ? sendRaw(outgoing) : sendHttp(outgoing);
  };
  const given: Readonly<Record<Tenant, Readonly<Record<string, string>> | undefined>> = {
    first: plan.headers,
    second: plan.otherHeaders,
    principal: plan.principalHeaders,
    revoked: plan.revokedHeaders,
    expired: plan.expired?.headers,
  };
  const credentials = (tenant: Tenant): readonly HeaderLine[] => Object.entries(given[tenant] ?? plan.headers);
  const get = (url: URL, accept: string, tenant: Tenant): Promise<Exchange> => {
    const headers = credentials(tenant).filter(([name]) => name !== 'content-type');
    return send({ url, method: 'GET', headers: [['accept', accept], ...headers] }, false);
  };
  return {
    plan,
    uuid: randomUUID,
    attempt(attempt) {
      const headers: HeaderLine[] = [
        ...credentials(attempt.tenant ?? 'first'),
        ...attempt.keys.map((key): HeaderLine => ['idempotency-key', key]),
      ];
      const request = {
        url: plan.url,
        method: plan.method,
        headers,
        body: Buffer.from(attempt.body, 'utf8'),
        abandonAfterMs: attempt.abandonAfterMs,
        hangUp: attempt.hangUp,
      };
      return send(request, attempt.raw === true || attempt.hangUp === true);
    },
    async count(tenant, uuid) {
      if (plan.countUrl === undefined) return undefined;
      return read(await get(new URL(fillTemplate(plan.countUrl, uuid)), 'application/json', tenant));
    },
    document(url) {
      return get(url, 'text/html, application/json;q=0.9, */*;q=0.5', 'first');
    },
  };
}

/** What an attempt created: the count under the attempt's credentials, read before it and after it. */
export interface CountedExchange {
  readonly exchange: Exchange;
  readonly before: Reading | undefined;
  readonly after: Reading | undefined;
}

/** One attempt between two reads of the count URL for `uuid`, with the attempt's credentials. */
export async function countedAttempt(ctx: ProbeContext, uuid: string, attempt: Attempt): Promise<CountedExchange> {
  const tenant = attempt.tenant ?? 'first';
  const before = await ctx.count(tenant, uuid);
  const exchange = await ctx.attempt(attempt);
  return { exchange, before, after: await ctx.count(tenant, uuid) };
}

function read(exchange: Exchange): Reading {
  if (exchange.kind !== 'answered')
    return { ok: false, detail: exchange.kind === 'failed' ? exchange.detail : 'no answer' };
  const { status, body } = exchange.answer;
  if (status !== 200) return { ok: false, detail: `the count URL answered ${status}` };
  let document: unknown;
  try {
    document = JSON.parse(body.toString('utf8'));
  } catch {
    return { ok: false, detail: 'the count URL did not answer JSON' };
  }
  const count = countResources(document);
  return count === undefined
    ? { ok: false, detail: 'the count URL answered JSON without an array' }
    : { ok: true, count };
}
