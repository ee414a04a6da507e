import type { DeliveryOption } from '../data/catalogue.js';
import type { OrderRow } from '../data/queries.js';

/** An order as the API shows it. */
export interface OrderView {
  readonly id: string;
  readonly cart_id: string;
  readonly cart_version: number;
  readonly delivery_option: DeliveryOption;
  readonly total_cents: number;
  /** ISO 8601, UTC. */
  readonly created_at: string;
  /** ISO 8601, UTC, once the provider reported the payment; null until then. */
  readonly paid_at: string | null;
}

export function orderView(row: OrderRow): OrderView {
  return {
    id: row.id,
    cart_id: row.cart_id,
    cart_version: row.cart_version,
    delivery_option: row.delivery_option,
    total_cents: row.total_cents,
    created_at: row.created_at.toISOString(),
    paid_at: row.paid_at?.toISOString() ?? null,
  };
}

export function orderLocation(id: string): string {
  return `/v1/orders/${encodeURIComponent(id)}`;
}
