-- The orders service's own tables. Every file in this folder is applied on each
-- start, in order, so each statement must be safe to run again.

-- One cart per (tenant, cart_id). cart_version grows only when the items change,
-- so a client can say which contents it checked out.
CREATE TABLE IF NOT EXISTS carts (
    tenant text NOT NULL CHECK (octet_length(tenant) BETWEEN 1 AND 255),
    cart_id text NOT NULL CHECK (cart_id ~ '^[A-Za-z0-9_-]{1,64}$'),
    cart_version integer NOT NULL CHECK (cart_version >= 1),
    -- [{"sku", "qty"}] sorted by SKU, so equal contents compare equal as jsonb.
    items jsonb NOT NULL CHECK (jsonb_typeof(items) = 'array'),
    updated_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant, cart_id)
);

CREATE TABLE IF NOT EXISTS orders (
    tenant text NOT NULL CHECK (octet_length(tenant) BETWEEN 1 AND 255),
    id text NOT NULL CHECK (id ~ '^ord_[A-Za-z0-9_-]{16}$'),
    cart_id text NOT NULL,
    cart_version integer NOT NULL,
    delivery_option text NOT NULL CHECK (delivery_option IN ('standard', 'express')),
    -- The priced items as they were when the order was placed: [{"sku", "qty", "unit_price_cents"}].
    lines jsonb NOT NULL CHECK (jsonb_typeof(lines) = 'array'),
    total_cents integer NOT NULL CHECK (total_cents >= 0),
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant, id),
    -- The business rule, independent of idempotency keys: one order per checked-out
    -- cart version, whichever keys the clients send.
    CONSTRAINT orders_one_per_cart_version UNIQUE (tenant, cart_id, cart_version)
);

CREATE INDEX IF NOT EXISTS orders_by_created ON orders (tenant, created_at DESC, id);
