import autocannon from 'autocannon';
import { ORDER_BODY, ORDER_HEADERS } from './request.js';

/** One timed load against POST /orders. */
export interface LoadSpec {
  readonly url: string;
  readonly connections: number;
  readonly seconds: number;
  /** Requests per second for all connections together; as fast as the server answers when absent. */
  readonly rate?: number;
  /** The Idempotency-Key of the next request. */
  readonly nextKey: () => string;
}

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

export async function load(spec: LoadSpec): Promise<LoadResult> {
  const result = await autocannon({
    url: spec.url,
    connections: spec.connections,
    duration: spec.seconds,
    pipelining: 1,
    timeout: 10,
    ...(spec.rate === undefined ? {} : { overallRate: spec.rate }),
    requests: [
      {
        method: 'POST',
        path: '/orders',
        headers: ORDER_HEADERS,
        body: ORDER_BODY,
        setupRequest: (request) => ({ ...request, headers: { ...ORDER_HEADERS, 'idempotency-key': spec.nextKey() } }),
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
