/**
 * Statements of the sweeper. Each one handles at most $1 rows, found by
 * walking one of the two indexes of migration 0020 on a time a finished record
 * gets once and keeps (so a tombstone is rewritten in place, without new index
 * entries), in its order from $2 (where the step's previous batch stopped,
 * `{-infinity}` for a pass's first) up to now. ORDER BY the index's columns
 * with LIMIT is what keeps the walk on the index whatever the statistics say:
 * without it, once they counted a tenth of the table as due, the planner read
 * the table for the first $1 rows it expected to meet, and an empty batch then
 * read all of it. The rows are locked with SKIP LOCKED and reached again by
 * their physical address (ctid, stable while the row is locked), and each
 * batch runs as its own statement: no batch waits for a request, and no
 * request waits for more than one batch. Unfinished operations (`in_progress`,
 * `unknown`) have neither time and are never swept.
 */

/** Element `n` of $2, where the step's previous batch stopped: the text of an array of the walk's values. */
const from = (n: number): string => `($2::text[])[${n}]`;

/**
 * `due`: at most $1 rows in `states` due by the first of `walk` (an index's
 * columns), in the index's order from the row of values `start` on, locked.
 * The step's batch then answers how many rows it changed (`n`, counted from
 * `changed`) and the walk's values of the last one (`resume`), from which its
 * next batch walks on: rows of the other step that this one stepped over are
 * not read again.
 */
function batch(
  walk: readonly string[],
  start: readonly string[],
  states: string,
  change: string,
  changed: string,
): string {
  const [time = '', ...rest] = walk;
  const order = ['at', ...rest];
  return `due AS MATERIALIZED (
  SELECT ctid, ${[`${time} AS at`, ...rest].join(', ')} FROM retrysafe_operations
  WHERE (${walk.join(', ')}) >= (${start.join(', ')}) AND ${time} <= now() AND state IN (${states})
  ORDER BY ${walk.join(', ')}
  LIMIT $1
  FOR UPDATE SKIP LOCKED
), ${change}
SELECT (SELECT count(*)::int FROM ${changed}) AS n,
  (SELECT ARRAY[${order.map((column) => `${column}::text`).join(', ')}]::text FROM due
   ORDER BY ${order.map((column) => `${column} DESC`).join(', ')} LIMIT 1) AS resume`;
}

const FINISHED = `'completed', 'failed'`;

/** The tombstone step's walk: the index of response expiries, times then identities (migration 0022). */
const PLACE = ['response_expires_at', 'tenant', 'operation', 'key'] as const;

/** The row of `relation`'s values of the walk, for a comparison with another place. */
const place = (relation: string, columns: readonly string[] = ['at', 'tenant', 'operation', 'key']): string =>
  `(${columns.map((column) => `(SELECT ${column} FROM ${relation})`).join(', ')})`;

/**
 * Turns completed records whose response expired into tombstones: the body,
 * the headers and the recovery points go; identity, fingerprint, status and
 * resource reference stay, so a late retry is refused rather than run again.
 * $1 batch size, $2 where to walk from.
 *
 * The index of response expiries keeps a tombstone's entry, so the step walks
 * from the mark of `retrysafe_sweep_progress` (every response that expired
 * before it was swept) rather than through the tombstones. A batch that
 * started at the mark moves it to where it reached: its last row, or now when
 * it came back short; never past a due row it did not get (another sweeper
 * holds it, and may roll back). Only rows from where it started to where it
 * reached are looked for. It leaves the mark alone when the mark moved
 * meanwhile, back to a record that arrived with its response expired. The
 * index orders the records that share an expiry (a bulk import's) by identity,
 * and both the next batch and the mark are places in that order (migration
 * 0022): with the time alone, each batch walked again over every tombstone
 * made at that time before it, and the batch past them looked for held rows
 * among all of them.
 */
export const TOMBSTONE_EXPIRED = `
WITH mark AS (
  SELECT CASE WHEN r.resumed THEN r.at ELSE r.kept_at END AS at, CASE WHEN r.resumed THEN r.tenant ELSE r.kept_tenant END AS tenant,
    CASE WHEN r.resumed THEN r.operation ELSE r.kept_operation END AS operation,
    CASE WHEN r.resumed THEN r.key ELSE r.kept_key END AS key, r.kept_at, r.kept_tenant, r.kept_operation, r.kept_key
  FROM (
    SELECT f.*, p.responses_before AS kept_at, p.tenant AS kept_tenant, p.operation AS kept_operation, p.key AS kept_key,
      p.responses_before IS NULL OR (f.at, f.tenant, f.operation, f.key) >= (p.responses_before, p.tenant, p.operation, p.key)
        AS resumed
    FROM (SELECT ${from(1)}::timestamptz AS at, coalesce(${from(2)}, '') AS tenant, coalesce(${from(3)}, '') AS operation,
        coalesce(${from(4)}, '') AS key) AS f
      LEFT JOIN retrysafe_sweep_progress AS p ON true
  ) AS r
), ${batch(
  PLACE,
  ['at', 'tenant', 'operation', 'key'].map((column) => `(SELECT ${column} FROM mark)`),
  FINISHED,
  `swept AS (
  UPDATE retrysafe_operations
  SET state = 'tombstone', response_body = NULL, response_headers = NULL, input = NULL
  WHERE ctid = ANY (ARRAY(SELECT ctid FROM due))
  RETURNING tenant, operation, key
), steps AS (
  DELETE FROM retrysafe_steps AS s
  USING swept
  WHERE s.tenant = swept.tenant AND s.operation = swept.operation AND s.key = swept.key
), reached AS (
  SELECT at, tenant, operation, key FROM (
    SELECT at, tenant::text, operation::text, key::text FROM due
    WHERE (SELECT count(*) FROM due) = $1
    UNION ALL
    SELECT now(), '', '', '' WHERE (SELECT count(*) FROM due) < $1
  ) AS ends
  ORDER BY at DESC, tenant DESC, operation DESC, key DESC
  LIMIT 1
), unclaimed AS (
  -- The finished rows from where the batch started, in the walk's order, as many as it took and one more: a
  -- held one among them is before the last it took. Row comparisons bound a scan at one end only.
  SELECT o.response_expires_at AS at, o.tenant, o.operation, o.key, o.ctid FROM retrysafe_operations AS o
  WHERE (${PLACE.map((column) => `o.${column}`).join(', ')}) >= ${place('mark')}
    AND o.response_expires_at <= (SELECT at FROM reached) AND o.state IN (${FINISHED})
  ORDER BY ${PLACE.map((column) => `o.${column}`).join(', ')}
  LIMIT (SELECT count(*) FROM due) + 1
), held_at AS (
  -- An aggregate over all of them, so that the rows in due are set apart by one hash rather than a scan each.
  SELECT min(u.at) AS at FROM unclaimed AS u
  WHERE (u.at, u.tenant, u.operation, u.key) < ${place('reached')} AND NOT EXISTS (SELECT FROM due WHERE due.ctid = u.ctid)
), held AS (
  SELECT u.at, u.tenant::text, u.operation::text, u.key::text FROM unclaimed AS u
  WHERE u.at = (SELECT at FROM held_at) AND (u.at, u.tenant, u.operation, u.key) < ${place('reached')}
    AND NOT EXISTS (SELECT FROM due WHERE due.ctid = u.ctid)
  ORDER BY u.tenant, u.operation, u.key
  LIMIT 1
), moved AS (
  UPDATE retrysafe_sweep_progress AS p
  SET responses_before = t.at, tenant = t.tenant, operation = t.operation, key = t.key
  FROM (SELECT * FROM held UNION ALL SELECT * FROM reached ORDER BY 1, 2, 3, 4 LIMIT 1) AS t
  WHERE (p.responses_before, p.tenant, p.operation, p.key) = ${place('mark', ['kept_at', 'kept_tenant', 'kept_operation', 'kept_key'])}
    AND (p.responses_before, p.tenant, p.operation, p.key) >= (${[1, 2, 3, 4].map((n) => (n === 1 ? `${from(1)}::timestamptz` : `coalesce(${from(n)}, '')`)).join(', ')})
)`,
  'swept',
)}`;

/** Deletes tombstones past their own expiry; after this the key is new again. $1 batch size, $2 where to walk from. */
export const DELETE_EXPIRED_TOMBSTONES = `
WITH ${batch(
  ['expires_at'],
  [`${from(1)}::timestamptz`],
  `'tombstone'`,
  `deleted AS (
  DELETE FROM retrysafe_operations
  WHERE ctid = ANY (ARRAY(SELECT ctid FROM due))
  RETURNING 1
)`,
  'deleted',
)}`;
