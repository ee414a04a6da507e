import { Pool } from 'undici';
import { summariseLatencies } from './latency.js';
import type { LoadResult } from './load.js';
import { ORDER_BODY, ORDER_HEADERS } from './request.js';

/** Clients with their connections already open, so that the first burst is not spread over connection set-up. */
export interface Storm {
  /**
   * Every client sends one key, the same as every `keys.length`-th other
   * client, again and again for `seconds`. All clients send their first
   * request in the same instant: each key arrives many times at once.
   */
  run(keys: readonly string[], seconds: number): Promise<LoadResult>;
  close(): Promise<void>;
}

export async function openStorm(url: string, clients: number): Promise<Storm> {
  const pool = new Pool(url, { connections: clients, pipelining: 1 });
  await Promise.all(
    Array.from({ length: clients }, async () => {
      const { body } = await pool.request({ method: 'GET', path: '/' });
      await body.dump();
    }),
  );
  return {
    async run(keys, seconds) {
      const statuses: Record<string, number> = {};
      const latencies: number[] = [];
      let errors = 0;
      const started = performance.now();
      const end = started + seconds * 1000;
      await Promise.all(
        Array.from({ length: clients }, async (_, client) => {
          const headers = { ...ORDER_HEADERS, 'idempotency-key': keys[client % keys.length] ?? '' };
          while (performance.now() < end) {
            const sent = performance.now();
            try {
              const { statusCode, body } = await pool.request({
                method: 'POST',
                path: '/orders',
                headers,
                body: ORDER_BODY,
              });
              await body.dump();
              statuses[statusCode] = (statuses[statusCode] ?? 0) + 1;
              latencies.push(performance.now() - sent);
            } catch {
              errors += 1;
            }
          }
        }),
      );
      const elapsed = (performance.now() - started) / 1000;
      return {
        responses: latencies.length,
        seconds: elapsed,
        throughput: latencies.length / elapsed,
        ...summariseLatencies(latencies),
        statuses,
        errors,
      };
    },
    close: () => pool.close(),
  };
}
