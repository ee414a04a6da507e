-- Payments of orders, charged through the payment provider in retrysafe's
-- leased mode. A payment is reserved (pending) before the card is charged, so
-- two keys for the same order cannot both charge it.
CREATE TABLE IF NOT EXISTS payments (
    tenant text NOT NULL,
    id text NOT NULL CHECK (id ~ '^pay_[A-Za-z0-9_-]{16}$'),
    order_id text NOT NULL,
    amount_cents integer NOT NULL CHECK (amount_cents > 0),
    status text NOT NULL CHECK (status IN ('pending', 'succeeded', 'declined')),
    charge_id text,
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant, id),
    FOREIGN KEY (tenant, order_id) REFERENCES orders (tenant, id)
);

-- The business rule, independent of keys: one live payment per order. A declined
-- payment does not count, so the customer can try again with a new key.
CREATE UNIQUE INDEX IF NOT EXISTS payments_one_live_per_order
    ON payments (tenant, order_id) WHERE status <> 'declined';

-- Set once, by the provider's payment.succeeded webhook.
ALTER TABLE orders ADD COLUMN IF NOT EXISTS paid_at timestamptz;
