import type { SqlClient, SqlDatabase } from 'retrysafe/postgres';
import { type ReceivedWebhook, WebhookWorker, type WebhookWorkerOptions } from 'retrysafe/webhooks';
import { CHARGED_ORDER_TENANT, MARK_ORDER_PAID } from '../data/queries.js';

/** The receiver the provider's webhooks are recorded under; also their consumer name in the inbox. */
export const PROVIDER_RECEIVER = 'provider';

/** The fields of a `payment.succeeded` event this service reads. */
interface SucceededCharge {
  /** The order id: `create-payment.ts` charges with it as the reference. */
  readonly reference: string;
  readonly amount_cents: number;
}

/**
 * Processes the provider's recorded webhooks, one transaction each, through
 * the inbox: a `payment.succeeded` marks its order paid once, however often it
 * was delivered.
 */
export function providerEventWorker(
  database: SqlDatabase<SqlClient>,
  options: Pick<WebhookWorkerOptions<SqlClient>, 'onError' | 'idleMs'> = {},
): WebhookWorker<SqlClient> {
  return new WebhookWorker({ ...options, database, receiver: PROVIDER_RECEIVER, handler: applyProviderEvent });
}

async function applyProviderEvent(event: ReceivedWebhook, tx: SqlClient): Promise<void> {
  const charge = succeededCharge(event.payload);
  // Other event types need nothing from this service; they are marked processed.
  if (charge === undefined) return;
  const tenants = (await tx.query<{ tenant: string }>(CHARGED_ORDER_TENANT, [charge.reference, charge.amount_cents]))
    .rows;
  // No reserved payment matches: retried, then parked for an operator rather than dropped.
  if (tenants.length !== 1 || tenants[0] === undefined) {
    throw new Error(`No payment of ${charge.amount_cents} cents is reserved for order ${charge.reference}.`);
  }
  await tx.query(MARK_ORDER_PAID, [tenants[0].tenant, charge.reference]);
}

function succeededCharge(payload: unknown): SucceededCharge | undefined {
  const event = payload as {
    type?: unknown;
    data?: { charge?: { reference?: unknown; amount_cents?: unknown } };
  } | null;
  if (event?.type !== 'payment.succeeded') return undefined;
  const charge = event.data?.charge;
  if (typeof charge?.reference !== 'string' || !Number.isInteger(charge.amount_cents)) {
    throw new Error('A payment.succeeded event needs data.charge.reference and data.charge.amount_cents.');
  }
  return { reference: charge.reference, amount_cents: charge.amount_cents as number };
}
