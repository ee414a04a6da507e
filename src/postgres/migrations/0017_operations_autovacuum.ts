import type { Migration } from './migration.js';

/**
 * Migration 0017. Its SQL is kept as written:
 * never edit a released migration, add a new one.
 */
export const operationsAutovacuum: Migration = {
  version: 17,
  name: 'operations_autovacuum',
  sql: String.raw`-- PostgreSQL's defaults vacuum a table once a fifth of its rows are dead,
-- and analyze it once a tenth changed. With the default retention the
-- sweeper kills about a fifteenth of the operation table a day (each record
-- becomes a tombstone once and is deleted once in its thirty days): at ten
-- million records, 1.35 million dead rows had not started a vacuum, while
-- every index kept their entries and walks of the sweep index read them. At
-- 2 % a vacuum follows every seven hours or so, and a new key's inserts set
-- the visibility map and freeze at the same pace. Storage parameters only:
-- SHARE UPDATE EXCLUSIVE, which neither reads nor writes wait for (an
-- autovacuum of the table yields to it, a manual VACUUM is waited for), and
-- no rewrite.
ALTER TABLE retrysafe_operations SET (
    autovacuum_vacuum_scale_factor = 0.02,
    autovacuum_vacuum_insert_scale_factor = 0.02,
    autovacuum_analyze_scale_factor = 0.02
);
`,
};
