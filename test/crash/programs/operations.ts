import { idempotency, type Idempotency } from '../../../src/modes/idempotency.js';
import { postgresStore } from '../../../src/postgres/index.js';
import type { SqlClient, SqlDatabase } from '../../../src/store/sql-client.js';
import { paymentRoute } from '../../leases/payment-route.js';

/** The configuration the crash programs share, from the environment the test sets. */
export function crashConfig(database: SqlDatabase<SqlClient>): Idempotency<SqlClient> {
  return idempotency({
    store: postgresStore(database),
    leaseSeconds: Number(process.env.LEASE_SECONDS ?? 2),
    maxAttempts: Number(process.env.MAX_ATTEMPTS ?? 20),
    activity: { flushIntervalMs: Number(process.env.ACTIVITY_FLUSH_MS ?? 10_000) },
  });
}

export function payments() {
  const url = process.env.PROVIDER_URL;
  if (url === undefined) throw new Error('PROVIDER_URL is required');
  return paymentRoute(url);
}
