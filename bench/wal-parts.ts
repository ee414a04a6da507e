/**
 * What a window's WAL is made of, from `pg_waldump --stats=record` over it:
 * the heap's records (rows written), the index entries, the index pages
 * split, the commits, and the rest (other records, each record's alignment
 * to 8 bytes and the WAL pages' own headers, which the statistics leave out).
 */
export type WalPart = 'rows' | 'entries' | 'splits' | 'commits' | 'rest';

export type WalParts = Readonly<Record<WalPart, number>>;

/** The parts in the order the report shows them, with their column headings. */
export const WAL_PARTS: readonly (readonly [WalPart, string])[] = [
  ['rows', 'heap rows'],
  ['entries', 'index entries'],
  ['splits', 'index pages split'],
  ['commits', 'commits'],
  ['rest', 'the rest (alignment, page headers, other records)'],
];

/** One line of the statistics: resource manager/record type, count, then sizes with their shares; the last is the combined size. */
const LINE =
  /^(\w+)\/(\S+)\s+\d+\s+\(\s*[\d.]+\)\s+\d+\s+\(\s*[\d.]+\)\s+\d+\s+\(\s*[\d.]+\)\s+(\d+)\s+\(\s*[\d.]+\)\s*$/;

const partOf = (manager: string, type: string): WalPart =>
  manager === 'Heap'
    ? 'rows'
    : manager === 'Btree'
      ? type === 'INSERT_LEAF'
        ? 'entries'
        : 'splits'
      : manager === 'Transaction'
        ? 'commits'
        : 'rest';

/**
 * The bytes of each part in `stats` (pg_waldump's output), `totalBytes`
 * being the window's length in the WAL: what the records do not account for
 * is counted in the rest. An empty window (0 bytes) needs no statistics.
 */
export function walParts(stats: string, totalBytes: number): WalParts {
  const parts: Record<WalPart, number> = { rows: 0, entries: 0, splits: 0, commits: 0, rest: 0 };
  let lines = 0;
  for (const line of stats.split('\n')) {
    const match = LINE.exec(line.trim());
    if (match === null) continue;
    const [, manager = '', type = '', combined = '0'] = match;
    parts[partOf(manager, type)] += Number(combined);
    lines += 1;
  }
  if (lines === 0 && totalBytes !== 0) throw new Error(`pg_waldump printed no record statistics:\n${stats}`);
  const counted = parts.rows + parts.entries + parts.splits + parts.commits + parts.rest;
  parts.rest += totalBytes - counted;
  return parts;
}

/** Each part divided by `count`. */
export const perTransaction = (parts: WalParts, count: number): WalParts => ({
  rows: parts.rows / count,
  entries: parts.entries / count,
  splits: parts.splits / count,
  commits: parts.commits / count,
  rest: parts.rest / count,
});

/** One line of the statistics with its whole-page images' size, the third of its sizes. */
const IMAGES =
  /^\w+\/\S+\s+\d+\s+\(\s*[\d.]+\)\s+\d+\s+\(\s*[\d.]+\)\s+(\d+)\s+\(\s*[\d.]+\)\s+\d+\s+\(\s*[\d.]+\)\s*$/;

/** The bytes of whole pages written after a checkpoint (FPI size) in `stats`, pg_waldump's `--stats=record` output. */
export function walImageBytes(stats: string): number {
  return stats
    .split('\n')
    .map((line) => IMAGES.exec(line.trim())?.[1])
    .reduce((sum: number, bytes) => sum + Number(bytes ?? 0), 0);
}
