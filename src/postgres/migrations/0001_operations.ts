import type { Migration } from './migration.js';

/** Migration 0001. Its SQL is kept as written: never edit a released migration, add a new one. */
export const operations: Migration = {
  version: 1,
  name: 'operations',
  sql: String.raw`-- One row per operation identity. The primary key leads with the tenant, so the
-- table distributes or partitions by tenant, and it is what arbitrates a race:
-- of two concurrent claims, exactly one inserts.
CREATE TABLE retrysafe_operations (
    tenant text NOT NULL CHECK (octet_length(tenant) BETWEEN 1 AND 255),
    operation text NOT NULL CHECK (octet_length(operation) BETWEEN 3 AND 255),
    key text NOT NULL CHECK (octet_length(key) BETWEEN 1 AND 255),
    -- SHA-256 of the canonical input: detects a key reused for another request.
    fingerprint bytea NOT NULL CHECK (octet_length(fingerprint) = 32),
    state text NOT NULL
        CHECK (state IN ('in_progress', 'completed', 'failed', 'unknown', 'tombstone')),

    -- Leased mode only. The fencing token grows with every new owner and is
    -- never reset, so a stale owner's write can always be told apart.
    owner_token uuid,
    lease_expires_at timestamptz,
    attempt integer NOT NULL DEFAULT 1 CHECK (attempt >= 1),
    fencing_token integer NOT NULL DEFAULT 1 CHECK (fencing_token >= 1),

    -- The stored outcome: exact body bytes and only the allowed headers.
    response_status smallint CHECK (response_status BETWEEN 200 AND 599),
    response_headers jsonb,
    response_body bytea,
    -- The created resource (Location), kept in the tombstone.
    resource_ref text CHECK (octet_length(resource_ref) <= 2048),
    -- Why an operation is unknown or was resolved by hand.
    reason text CHECK (octet_length(reason) <= 4096),

    created_at timestamptz NOT NULL DEFAULT now(),
    finished_at timestamptz,
    -- When the sweeper turns the response into a tombstone, and when it deletes the tombstone.
    response_expires_at timestamptz,
    expires_at timestamptz,

    PRIMARY KEY (tenant, operation, key),

    -- Atomic mode inserts in_progress without a lease and never commits it.
    CONSTRAINT retrysafe_operations_in_progress CHECK (
        state <> 'in_progress'
        OR (response_status IS NULL AND (owner_token IS NULL) = (lease_expires_at IS NULL))),
    CONSTRAINT retrysafe_operations_finished CHECK (
        state NOT IN ('completed', 'failed')
        OR (response_status IS NOT NULL AND response_headers IS NOT NULL AND response_body IS NOT NULL
            AND finished_at IS NOT NULL AND response_expires_at IS NOT NULL AND expires_at IS NOT NULL)),
    CONSTRAINT retrysafe_operations_unknown CHECK (state <> 'unknown' OR reason IS NOT NULL),
    CONSTRAINT retrysafe_operations_tombstone CHECK (
        state <> 'tombstone'
        OR (response_status IS NOT NULL AND response_body IS NULL AND expires_at IS NOT NULL))
);

-- The sweeper walks these in small batches; reads never decide expiry.
CREATE INDEX retrysafe_operations_response_expiry
    ON retrysafe_operations (response_expires_at) WHERE state IN ('completed', 'failed');
CREATE INDEX retrysafe_operations_tombstone_expiry
    ON retrysafe_operations (expires_at) WHERE state = 'tombstone';
-- The recovery worker looks for expired leases; operators look for unknown outcomes.
CREATE INDEX retrysafe_operations_leases
    ON retrysafe_operations (lease_expires_at) WHERE state = 'in_progress';
CREATE INDEX retrysafe_operations_unknown
    ON retrysafe_operations (created_at) WHERE state = 'unknown';
`,
};
