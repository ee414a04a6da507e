import type { Migration } from './migration.js';

/** Migration 0006. Its SQL is kept as written: never edit a released migration, add a new one. */
export const stepStartsAndBackoff: Migration = {
  version: 6,
  name: 'step_starts_and_backoff',
  sql: String.raw`-- Leased mode learns what an attempt started, not only what it finished, and
-- spaces its retries.

-- A step is recorded as started before its downstream call, and finished when
-- its result is checkpointed. A started row without a result says a call may
-- have reached the outside world: the operation can then never be dropped, and
-- the next attempt reconciles that step before anything else.
ALTER TABLE retrysafe_steps
    ALTER COLUMN result DROP NOT NULL,
    ALTER COLUMN finished_at DROP NOT NULL,
    ALTER COLUMN finished_at DROP DEFAULT,
    -- Rows written before this migration were finished when written.
    ADD COLUMN started_at timestamptz NOT NULL DEFAULT now();

ALTER TABLE retrysafe_operations
    -- No take-over before this time: the backoff after a failed attempt.
    ADD COLUMN not_before timestamptz,
    -- Failed attempts that count toward giving up: not those whose step the
    -- downstream confirmed had no effect. Only ever incremented. A plain
    -- integer: adding a column of a domain with a check rewrites the table.
    ADD COLUMN failures integer NOT NULL DEFAULT 0,
    -- When an operator last put an unknown operation back into recovery: the
    -- give-up horizon counts from here, or else from the claim.
    ADD COLUMN retried_at timestamptz;
`,
};
