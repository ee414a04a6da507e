import type { Migration } from './migration.js';

/** Migration 0002. Its SQL is kept as written: never edit a released migration, add a new one. */
export const leases: Migration = {
  version: 2,
  name: 'leases',
  sql: String.raw`-- Leased mode: the effect leaves the database, so the claim commits first and
-- the work is checkpointed step by step.

-- How the operation runs: 'atomic' rows are only ever committed finished;
-- 'leased' rows can be resumed from their input by a retry or a recovery
-- worker; 'transparent' rows wrap a route retrysafe cannot re-run, so an
-- expired lease there becomes 'unknown' rather than a second execution.
ALTER TABLE retrysafe_operations
    ADD COLUMN mode text NOT NULL DEFAULT 'atomic' CHECK (mode IN ('atomic', 'leased', 'transparent')),
    -- The validated input, so that a recovery worker can finish the operation without the original request.
    ADD COLUMN input jsonb,
    -- A response too large to keep: status and headers are kept, the body is not.
    ADD COLUMN response_omitted boolean NOT NULL DEFAULT false;

-- Recovery points: one row per finished step. Written only by the current
-- lease owner (the statement checks owner and fencing token), never changed.
CREATE TABLE retrysafe_steps (
    tenant text NOT NULL,
    operation text NOT NULL,
    key text NOT NULL,
    step text NOT NULL CHECK (octet_length(step) BETWEEN 1 AND 200),
    result jsonb NOT NULL,
    -- The owner's token when it was written, for audit.
    fencing_token integer NOT NULL,
    finished_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant, operation, key, step),
    FOREIGN KEY (tenant, operation, key) REFERENCES retrysafe_operations ON DELETE CASCADE
);
`,
};
