import autocannon from 'autocannon';
import type { Endpoint } from './database.js';
import { ORDER_BODY, ORDER_HEADERS } from './request.js';
import { SERVICE_TOKEN, serviceOrderBody } from './server/service.js';

/** How long a load runs: for a time, or until the server has given a count of responses. */
export type LoadLength = { readonly seconds: number } | { readonly requests: number };

/** One load against POST /orders, or the reference service's POST /v1/orders. */
export type LoadSpec = LoadLength & {
  readonly url: string;
  /** Default: the bench's own `POST /orders`. */
  readonly endpoint?: Endpoint;
  readonly connections: number;
  /** Requests per second for all connections together; as fast as the server answers when absent. */
  readonly rate?: number;
  /** The Idempotency-Key of the next request. */
  readonly nextKey: () => string;
  /** The x-tenant of the next request; the endpoint's own headers' when absent. */
  readonly nextTenant?: () => string;
};

export interface LoadResult {
  /** Complete responses received in the window. */
  readonly responses: number;
  readonly seconds: number;
  readonly throughput: number;
  /** Milliseconds, at autocannon's 1 ms resolution. */
  readonly p50: number;
  readonly p99: number;
  readonly max: number;
  /** Responses by status code. */
  readonly statuses: Readonly<Record<string, number>>;
  /** Connection errors and timeouts. */
  readonly errors: number;
}

/** What each endpoint is sent: the same request every time but for the key, and for the service the cart it names. */
export const REQUESTS: Record<
  Endpoint,
  { readonly path: string; readonly headers: Readonly<Record<string, string>>; readonly body: (key: string) => string }
> = {
  orders: { path: '/orders', headers: ORDER_HEADERS, body: () => ORDER_BODY },
  service: {
    path: '/v1/orders',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${SERVICE_TOKEN}` },
    body: serviceOrderBody,
  },
};

export async function load(spec: LoadSpec): Promise<LoadResult> {
  const { path, headers, body } = REQUESTS[spec.endpoint ?? 'orders'];
  const result = await autocannon({
    url: spec.url,
    connections: spec.connections,
    ...('requests' in spec ? { amount: spec.requests } : { duration: spec.seconds }),
    pipelining: 1,
    timeout: 10,
    ...(spec.rate === undefined ? {} : { overallRate: spec.rate }),
    requests: [
      {
        method: 'POST',
        path,
        headers,
        body: ORDER_BODY,
        setupRequest: (request) => {
          const key = spec.nextKey();
          const tenant = spec.nextTenant === undefined ? {} : { 'x-tenant': spec.nextTenant() };
          return { ...request, headers: { ...headers, ...tenant, 'idempotency-key': key }, body: body(key) };
        },
      },
    ],
  });
  const statuses: Record<string, number> = {};
  for (const [code, { count }] of Object.entries(result.statusCodeStats ?? {})) statuses[code] = count ?? 0;
  const responses = Object.values(statuses).reduce((sum, count) => sum + count, 0);
  return {
    responses,
    seconds: result.duration,
    throughput: responses / result.duration,
    p50: result.latency.p50,
    p99: result.latency.p99,
    max: result.latency.max,
    statuses,
    errors: result.errors,
  };
}
