import { Pool } from 'undici';
import { ORDER_BODY, TENANT, tenantStream } from './request.js';

/**
 * Creates `count` operations with keys `${prefix}0` … so that a later load
 * only replays them; with `created` false, sends each once more, whatever it is answered.
 * The requests name `tenants` in turn.
 */
export async function precreate(
  url: string,
  prefix: string,
  count: number,
  created = true,
  concurrency = 16,
  tenants: readonly string[] = [TENANT],
): Promise<void> {
  const pool = new Pool(url, { connections: concurrency });
  const nextTenant = tenantStream(tenants);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < count) {
      const key = `${prefix}${next++}`;
      const { statusCode, body } = await pool.request({
        method: 'POST',
        path: '/orders',
        headers: { 'content-type': 'application/json', 'x-tenant': nextTenant(), 'idempotency-key': key },
        body: ORDER_BODY,
      });
      await body.dump();
      if (created && statusCode >= 300) throw new Error(`creating ${key} answered ${statusCode}`);
    }
  };
  try {
    await Promise.all(Array.from({ length: concurrency }, worker));
  } finally {
    await pool.close();
  }
}
