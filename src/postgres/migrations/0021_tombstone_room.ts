import type { Migration } from './migration.js';

/** Migration 0021. Its SQL is kept as written: never edit a released migration, add a new one. */
export const tombstoneRoom: Migration = {
  version: 21,
  name: 'tombstone_room',
  sql: String.raw`-- A tombstone is rewritten in place only when its page has room for the new,
-- shorter version beside the old one until the old is pruned. The sweeper
-- turns the records of a page into tombstones together (they expire
-- together), so a page needs room for all of theirs at once: with a fifth of
-- each page free (migration 0004), 55 % of 100,000 tombstones were rewritten
-- in place; with three tenths, all of them. Applies to pages filled from now
-- on. Storage parameter only: SHARE UPDATE EXCLUSIVE, which neither reads
-- nor writes wait for, and no rewrite.
ALTER TABLE retrysafe_operations SET (fillfactor = 70);
`,
};
