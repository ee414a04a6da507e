import type { CartItem, DeliveryOption } from './catalogue.js';

/** Every statement the service runs; the tables are in `schema/`. */

export interface CartRow {
  readonly cart_version: number;
  readonly items: readonly CartItem[];
}

export interface OrderRow {
  readonly id: string;
  readonly cart_id: string;
  readonly cart_version: number;
  readonly delivery_option: DeliveryOption;
  readonly total_cents: number;
  readonly created_at: Date;
  /** Set once the provider's `payment.succeeded` webhook was processed. */
  readonly paid_at: Date | null;
}

const ORDER_COLUMNS = 'id, cart_id, cart_version, delivery_option, total_cents, created_at, paid_at';

/**
 * Creates a cart at version 1, or replaces its items and bumps its version
 * only when they differ. Returns nothing when they are the same, but still
 * locks the row, so `READ_CART` that follows sees the current version.
 * $1 tenant, $2 cart_id, $3 items (JSON text).
 */
export const UPSERT_CART = `
INSERT INTO carts AS c (tenant, cart_id, cart_version, items)
VALUES ($1, $2, 1, $3::jsonb)
ON CONFLICT (tenant, cart_id) DO UPDATE
  SET cart_version = c.cart_version + 1, items = EXCLUDED.items, updated_at = now()
  WHERE c.items IS DISTINCT FROM EXCLUDED.items
RETURNING cart_version, items`;

/** $1 tenant, $2 cart_id. */
export const READ_CART = 'SELECT cart_version, items FROM carts WHERE tenant = $1 AND cart_id = $2';

/** Holds the cart still while it is priced and ordered, so a concurrent change waits. $1 tenant, $2 cart_id. */
export const LOCK_CART = `${READ_CART} FOR UPDATE`;

/**
 * The unique constraint on (tenant, cart_id, cart_version) turns a second
 * order for the same cart version into no row rather than an error, so the
 * transaction stays usable. $1 tenant, $2 id, $3 cart_id, $4 cart_version,
 * $5 delivery_option, $6 lines (JSON text), $7 total_cents.
 */
export const INSERT_ORDER = `
INSERT INTO orders (tenant, id, cart_id, cart_version, delivery_option, lines, total_cents)
VALUES ($1, $2, $3, $4, $5, $6::jsonb, $7)
ON CONFLICT (tenant, cart_id, cart_version) DO NOTHING
RETURNING ${ORDER_COLUMNS}`;

/** $1 tenant, $2 cart_id, $3 cart_version. */
export const FIND_ORDER_FOR_CART_VERSION =
  'SELECT id FROM orders WHERE tenant = $1 AND cart_id = $2 AND cart_version = $3';

/** $1 tenant, $2 id. */
export const READ_ORDER = `SELECT ${ORDER_COLUMNS} FROM orders WHERE tenant = $1 AND id = $2`;

/** Newest first. $1 tenant, $2 cart_id or null for every cart, $3 limit. */
export const LIST_ORDERS = `
SELECT ${ORDER_COLUMNS} FROM orders
WHERE tenant = $1 AND ($2::text IS NULL OR cart_id = $2)
ORDER BY created_at DESC, id DESC
LIMIT $3`;

export interface PaymentRow {
  readonly id: string;
  readonly order_id: string;
  readonly amount_cents: number;
  readonly status: 'pending' | 'succeeded' | 'declined';
  readonly charge_id: string | null;
  readonly created_at: Date;
}

const PAYMENT_COLUMNS = 'id, order_id, amount_cents, status, charge_id, created_at';

/** The order's total, locked so that its payment is reserved once. $1 tenant, $2 order id. */
export const LOCK_ORDER_TOTAL = 'SELECT total_cents FROM orders WHERE tenant = $1 AND id = $2 FOR UPDATE';

/**
 * Reserves the order's one live payment; no row when another payment holds it.
 * $1 tenant, $2 payment id, $3 order id, $4 amount.
 */
export const RESERVE_PAYMENT = `
INSERT INTO payments (tenant, id, order_id, amount_cents, status)
VALUES ($1, $2, $3, $4, 'pending')
ON CONFLICT (tenant, order_id) WHERE status <> 'declined' DO NOTHING
RETURNING id`;

/** $1 tenant, $2 order id. */
export const LIVE_PAYMENT = "SELECT id FROM payments WHERE tenant = $1 AND order_id = $2 AND status <> 'declined'";

/** $1 tenant, $2 payment id, $3 status, $4 charge id or null. */
export const SETTLE_PAYMENT = `
UPDATE payments SET status = $3, charge_id = $4
WHERE tenant = $1 AND id = $2 AND status = 'pending'
RETURNING ${PAYMENT_COLUMNS}`;

/** $1 tenant, $2 order id, $3 payment id. */
export const READ_PAYMENT = `SELECT ${PAYMENT_COLUMNS} FROM payments WHERE tenant = $1 AND order_id = $2 AND id = $3`;

/** $1 tenant, $2 order id. */
export const ORDER_EXISTS = 'SELECT 1 FROM orders WHERE tenant = $1 AND id = $2';

/**
 * The tenant of the order a provider charge paid for. The charge's reference
 * is the order id, and its payment was reserved, for this amount, before the
 * card was charged. $1 order id, $2 amount.
 */
export const CHARGED_ORDER_TENANT =
  "SELECT tenant FROM payments WHERE order_id = $1 AND amount_cents = $2 AND status <> 'declined'";

/** Marks an order paid once, whatever the number of deliveries. $1 tenant, $2 order id. */
export const MARK_ORDER_PAID =
  'UPDATE orders SET paid_at = now() WHERE tenant = $1 AND id = $2 AND paid_at IS NULL RETURNING id';

/**
 * Records the order's confirmation email. The inbox already keeps a message
 * from being applied twice; the unique key is the business rule behind it, so
 * a second message about the same order (a republish under a new id, say)
 * adds nothing either. $1 tenant, $2 order id.
 */
export const INSERT_ORDER_CONFIRMATION = `
INSERT INTO emails (tenant, order_id, kind) VALUES ($1, $2, 'order-confirmation')
ON CONFLICT (tenant, order_id, kind) DO NOTHING`;
