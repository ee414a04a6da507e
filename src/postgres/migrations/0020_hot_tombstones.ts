import type { Migration } from './migration.js';

/**
 * Migration 0020 (18 and 19 are other changes'). Its SQL is kept as written:
 * never edit a released migration, add a new one.
 */
export const hotTombstones: Migration = {
  version: 20,
  name: 'hot_tombstones',
  sql: String.raw`-- Turning a record into a tombstone changed ${'`'}state${'`'}, which the one sweep index of
-- migration 0009 read, so no tombstone was rewritten in place (a HOT update):
-- each wrote a new entry in every index of the table, the primary key's on a
-- random leaf page, about 4.7 kB of write-ahead log per tombstone at ten
-- million records. No index reads a column the tombstone changes from here
-- on: the sweeper walks two indexes of times a record gets once, when it
-- finishes, and never changes. Its response's expiry tells the tombstone step
-- what is due, its own expiry the delete step.
--
-- The response expiries stay in their index for the tombstone's thirty days,
-- and which of them are tombstones only the table knows. So the tombstone
-- step keeps where it got to: every completed or failed record whose response
-- expired before ${'`'}responses_before${'`'} is a tombstone already, and a pass walks
-- on from there instead of through every tombstone. A finished record has a
-- response expiry in its future; one that arrives with it already past (an
-- old record written by hand, a transaction that ran longer than its
-- retention) moves the mark back to it, by the trigger below. Its condition
-- is checked without calling the function, so a new key pays nothing for it.
CREATE TABLE retrysafe_sweep_progress (
    one boolean PRIMARY KEY DEFAULT true CHECK (one),
    responses_before timestamptz NOT NULL
);

-- Where the tombstone step starts: the earliest response not yet swept, found
-- on the index of migration 0009 before it goes.
INSERT INTO retrysafe_sweep_progress (responses_before)
SELECT least(now(), coalesce((
    SELECT CASE WHEN state = 'tombstone' THEN expires_at ELSE response_expires_at END
    FROM retrysafe_operations
    WHERE state IN ('completed', 'failed')
    ORDER BY CASE WHEN state = 'tombstone' THEN expires_at ELSE response_expires_at END
    LIMIT 1), now()));

CREATE FUNCTION retrysafe_response_arrived_expired() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    UPDATE retrysafe_sweep_progress SET responses_before = NEW.response_expires_at
    WHERE responses_before > NEW.response_expires_at;
    RETURN NULL;
END
$$;

-- A minute's margin: the mark can be set to the sweeper's time while a
-- record written moments before it commits.
CREATE TRIGGER retrysafe_operations_response_arrived_expired
    AFTER INSERT OR UPDATE OF response_expires_at ON retrysafe_operations
    FOR EACH ROW WHEN (NEW.response_expires_at < clock_timestamp() + interval '1 minute')
    EXECUTE FUNCTION retrysafe_response_arrived_expired();

-- Built in the migration's transaction, which holds off writes to the table
-- while they build. On a large table, build both first with CREATE INDEX
-- CONCURRENTLY and these definitions: the migration then keeps them as they
-- are. Unfinished records have neither time; their NULL entries sort after
-- every time, where the sweeper never reads.
CREATE INDEX IF NOT EXISTS retrysafe_operations_sweep_responses ON retrysafe_operations (response_expires_at);
CREATE INDEX IF NOT EXISTS retrysafe_operations_sweep_expiry ON retrysafe_operations (expires_at);
DROP INDEX retrysafe_operations_sweep;
ALTER INDEX retrysafe_operations_sweep_expiry RENAME TO retrysafe_operations_sweep;
`,
};
