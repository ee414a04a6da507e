import type { Migration } from './migration.js';

/**
 * Migration 0013 (12 is another change's). Its SQL is kept as written: never
 * edit a released migration, add a new one.
 */
export const activity: Migration = {
  version: 13,
  name: 'activity',
  sql: String.raw`-- What the console charts over time: how many new operations, replays,
-- fingerprint mismatches, conflicts and unknown outcomes each hour, per
-- operation. Each process counts in memory and adds its counts every few
-- seconds in one statement, so no request writes here: a new key's
-- transaction is what it was. A bucket is one row per hour, operation and
-- kind, so the table stays small whatever the traffic (no tenant and no key,
-- like the metrics' labels), and the sweeper deletes hours past their
-- retention. A new table: no other table is rewritten or locked.
CREATE TABLE retrysafe_activity (
    hour      timestamptz NOT NULL CHECK (extract(epoch FROM hour) % 3600 = 0),
    operation text NOT NULL CHECK (octet_length(operation) BETWEEN 1 AND 255),
    kind      text NOT NULL CHECK (kind IN ('new', 'replay', 'mismatch', 'conflict', 'unknown')),
    n         bigint NOT NULL CHECK (n > 0),
    -- Hour first: the console reads the last hours and the sweeper the oldest, both a walk of this key.
    PRIMARY KEY (hour, operation, kind)
);
`,
};
