import type { SqlClient } from '../../src/store/sql-client.js';
import type { ReceivedWebhook } from '../../src/webhooks/index.js';

/** The business table the webhook tests' handlers write: one row per charge, at the newest version seen. */
export const PAYMENTS_TABLE = `CREATE TABLE IF NOT EXISTS payments (
  charge text PRIMARY KEY,
  status text NOT NULL,
  version int NOT NULL
)`;

/** Applies a payment event, keeping the newest state by the event's version: events may come out of order. */
export async function applyPaymentEvent(event: ReceivedWebhook, tx: SqlClient): Promise<void> {
  const { type, charge, version } = event.payload as { type: string; charge: string; version: number };
  await tx.query(
    `INSERT INTO payments (charge, status, version) VALUES ($1, $2, $3)
     ON CONFLICT (charge) DO UPDATE SET status = excluded.status, version = excluded.version WHERE payments.version < excluded.version`,
    [charge, type.replace('payment.', ''), version],
  );
}
