-- Emails the service sends, one row each, written by the consumer of
-- order.created in the same transaction as its inbox record.
CREATE TABLE IF NOT EXISTS emails (
    tenant text NOT NULL,
    order_id text NOT NULL,
    kind text NOT NULL CHECK (kind IN ('order-confirmation')),
    created_at timestamptz NOT NULL DEFAULT now(),
    FOREIGN KEY (tenant, order_id) REFERENCES orders (tenant, id),
    -- The business rule, independent of message ids: one email of a kind per order.
    CONSTRAINT emails_one_per_order_and_kind UNIQUE (tenant, order_id, kind)
);
