import { defaultRetention } from '../src/core/retention.js';
import { median } from './latency.js';

/**
 * retrysafe at production sizes (`--only scale`, `measure-scale.ts`): a new
 * key's cost as the record table grows, a sweep pass over a filled table
 * while new keys arrive, what a tombstone writes, whether fill-and-sweep
 * cycles leave the table larger, and what a record and a tombstone take on
 * disk. Each figure beside its goal.
 */

/**
 * The transactions measured per key: A's (`bare`), and B's with
 * retrysafe/client's time-ordered keys, with random v4 keys, and with random
 * keys on a cluster that compresses page images (`wal_compression = lz4`).
 */
export type KeyShape = 'bare' | 'v7' | 'v4' | 'v4-lz4';

export const KEY_SHAPES: readonly (readonly [KeyShape, string])[] = [
  ['bare', "A: `BEGIN`, the order `INSERT`, `COMMIT` (the bare endpoint's transaction)"],
  ['v7', "B with retrysafe/client's keys (UUIDv7): the claim, the order `INSERT`, the record, as the store sends them"],
  ['v4', 'B with random UUIDv4 keys'],
  ['v4-lz4', 'B with random UUIDv4 keys, `wal_compression = lz4`'],
];

/** One shape's window at one size of the record table, per transaction. */
export interface KeyCost {
  /** Records in the table when the window began. */
  readonly records: number;
  readonly shape: KeyShape;
  /** User plus system CPU time of all the cluster's processes. */
  readonly cpuMicros: number;
  readonly walBytes: number;
  /** The share of `walBytes` that was whole pages written after a checkpoint (pg_waldump's FPI size). */
  readonly imageBytes: number;
  readonly tps: number;
}

/** The statement plan of one batch statement, as it was when the pass first sent it. */
export interface BatchPlan {
  readonly statement: string;
  readonly plan: string;
  readonly walksIndex: boolean;
}

/**
 * Where a pass's due records lie. `oldest`: those that finished first, as a
 * day's expiry makes them due in a service: written together, so near each
 * other in the heap, each shared expiry's in key order. `scattered`: chosen at
 * random over the whole heap and sharing one expiry, so that the walk meets
 * each on a page of its own: the worst case.
 */
export type DueLayout = 'oldest' | 'scattered';

/** What a pass sweeps, and the sweeper's `maxRecordsPerSecond` for it (none when undefined). */
export interface PassSpec {
  readonly percentDue: number;
  readonly layout: DueLayout;
  readonly limit?: number;
}

/**
 * The passes, in order, over one table: each makes its share due among the
 * records not yet swept. Each at `limit` records a second, and 10 % due once
 * without it, beside the limited pass, to show what the limit buys.
 */
export function sweepPasses(limit: number): PassSpec[] {
  return [
    { percentDue: 0, layout: 'oldest', limit },
    { percentDue: 10, layout: 'oldest' },
    { percentDue: 10, layout: 'oldest', limit },
    { percentDue: 50, layout: 'oldest', limit },
    { percentDue: 10, layout: 'scattered', limit },
  ];
}

/** One sweep pass over the filled table while B runs at a fixed rate. */
export interface SweepPass extends PassSpec {
  readonly records: number;
  /** Tombstoned and deleted together. */
  readonly swept: number;
  readonly seconds: number;
  /** The pass's failed steps (a store time-out among them), by message. */
  readonly failures: readonly string[];
  readonly plans: readonly BatchPlan[];
  /** B's p99 in ms at the same rate, before the pass and during it. */
  readonly p99Without: number;
  readonly p99With: number;
  /** The CPU the pass added, in cores: the cluster's and the bench process's during it, over B's alone. */
  readonly passCores: number;
  /** B's p99 beside a busy loop that takes `passCores` and does nothing else: the machine's bound for `p99With`. */
  readonly p99BesideBusyLoop: number;
}

/** The record tables' sizes after one fill-and-sweep cycle. */
export interface CycleSizes {
  readonly cycle: number;
  readonly heapBytes: number;
  readonly indexBytes: number;
}

export interface ScaleRun {
  readonly serverVersion: string;
  readonly settings: readonly string[];
  readonly transactions: number;
  readonly costs: readonly KeyCost[];
  readonly sweeps: readonly SweepPass[];
  /** B's rate during the passes, transactions per second. */
  readonly sweepRate: number;
  /** WAL bytes per tombstone and per deleted tombstone, each cycle's tombstone step and delete step. */
  readonly tombstoneWal: readonly number[];
  readonly deleteWal: readonly number[];
  readonly live: number;
  readonly cycles: readonly CycleSizes[];
  readonly bytesPerRecord: number;
  readonly bytesPerTombstone: number;
  readonly loadBefore: number;
  readonly loadAfter: number;
}

/** `--scale-sizes`: record counts, ascending, each a whole number from 0. */
export function parseSizes(text: string): number[] {
  const sizes = text.split(',').map((part) => Number(part.trim().replace(/_/g, '')));
  if (sizes.length === 0 || sizes.some((size) => !Number.isInteger(size) || size < 0))
    throw new Error('--scale-sizes must be record counts such as 0,1000000,10000000');
  return [...new Set(sizes)].sort((a, b) => a - b);
}

/** What N new keys a second keep with the default retention: records for a day, then tombstones to the 30th. */
export function sizing(bytesPerRecord: number, bytesPerTombstone: number, keysPerSecond: number) {
  const records = keysPerSecond * defaultRetention.responseSeconds;
  const tombstones = keysPerSecond * (defaultRetention.tombstoneSeconds - defaultRetention.responseSeconds);
  return { records, tombstones, bytes: records * bytesPerRecord + tombstones * bytesPerTombstone };
}

/**
 * A plan that reads retrysafe's record tables only through an index. The
 * swept records' steps are deleted by their identities, a join whose side
 * PostgreSQL may scan while that table is small; the tombstone step's mark
 * is a table of one row.
 */
export function walksIndex(plan: string): boolean {
  return !/Seq Scan on retrysafe_(?!steps\b|sweep_progress\b)/.test(plan) && /Index (Only )?Scan/.test(plan);
}

/** What a tombstone was measured to write before its design changed: 4.7 kB at 10 million records. */
export const TOMBSTONE_WAL_BEFORE = 4700;

export interface ScaleGoal {
  readonly label: string;
  readonly measured: string;
  readonly goal: string;
  readonly met: boolean;
}

const ratio = (top: number | undefined, bottom: number | undefined): number =>
  top === undefined || bottom === undefined || bottom === 0 ? Number.NaN : top / bottom;

/** Each goal with its figure; a figure that could not be measured is missed. */
export function scaleGoals(run: ScaleRun): ScaleGoal[] {
  const sizes = [...new Set(run.costs.map((c) => c.records))].sort((a, b) => a - b);
  const cost = (records: number | undefined, shape: KeyShape) =>
    run.costs.find((c) => c.records === records && c.shape === shape);
  const [first, last] = [sizes[0], sizes.at(-1)];
  const goal = (label: string, value: number, limit: number, digits = 2): ScaleGoal => ({
    label,
    measured: fixed(value, digits),
    goal: `≤ ${limit}`,
    met: value <= limit,
  });
  const growth = (pick: (c: CycleSizes) => number): number => {
    const base = run.cycles[0];
    return base === undefined ? Number.NaN : Math.max(...run.cycles.map((c) => pick(c) / pick(base)));
  };
  const atLast = `at ${count(last)} over ${count(first)} records`;
  return [
    goal(`WAL per new key (v7) ${atLast}`, ratio(cost(last, 'v7')?.walBytes, cost(first, 'v7')?.walBytes), 1.5),
    goal(
      `PostgreSQL CPU per new key (v7) ${atLast}`,
      ratio(cost(last, 'v7')?.cpuMicros, cost(first, 'v7')?.cpuMicros),
      1.2,
    ),
    ...run.sweeps.flatMap((pass): ScaleGoal[] => [
      {
        label: `sweep of ${count(pass.records)} records, ${due(pass)}: no failed step, every batch walks an index`,
        measured: `${pass.failures.length} failed, ${pass.plans.filter((p) => p.walksIndex).length}/${pass.plans.length} walk`,
        goal: 'none failed, all walk',
        met: pass.failures.length === 0 && pass.plans.length > 0 && pass.plans.every((p) => p.walksIndex),
      },
      ...(pass.percentDue === 0
        ? []
        : [
            {
              label: `records swept per second, ${due(pass)}, while B runs`,
              measured: fixed(pass.swept / pass.seconds, 0),
              goal: '≥ 20000',
              met: pass.swept / pass.seconds >= 20_000,
            },
          ]),
      {
        ...goal(`B's p99 during the pass over without it, ${due(pass)}`, pass.p99With / pass.p99Without, 1.5),
        measured: `${fixed(pass.p99With / pass.p99Without, 2)} (${fixed(pass.p99BesideBusyLoop / pass.p99Without, 2)} beside a busy loop of the same CPU)`,
      },
    ]),
    goal(
      `WAL bytes per tombstone (a quarter of ${TOMBSTONE_WAL_BEFORE})`,
      median(run.tombstoneWal),
      TOMBSTONE_WAL_BEFORE / 4,
      0,
    ),
    goal(
      `heap after ${run.cycles.length} fill-and-sweep cycles over after the first`,
      growth((c) => c.heapBytes),
      1.3,
    ),
    goal(
      `indexes after ${run.cycles.length} fill-and-sweep cycles over after the first`,
      growth((c) => c.indexBytes),
      1.3,
    ),
  ];
}

/** The report's section. */
export function renderScale(run: ScaleRun): string[] {
  const total = sizing(run.bytesPerRecord, run.bytesPerTombstone, 1000);
  const costRows = run.costs.map((c) => {
    const cells = [
      count(c.records),
      c.shape,
      fixed(c.cpuMicros, 0),
      fixed(c.walBytes, 0),
      `${fixed((100 * c.imageBytes) / c.walBytes, 1)} %`,
      fixed(c.tps, 0),
    ];
    return `| ${cells.join(' | ')} |`;
  });
  const sweepRows = run.sweeps.map(
    (s) =>
      `| ${due(s)} | ${count(s.swept)} | ${fixed(s.seconds, 1)} | ${fixed(s.swept / s.seconds, 0)} | ${fixed(s.passCores, 2)} | ${fixed(s.p99Without, 1)} | ${fixed(s.p99With, 1)} | ${fixed(s.p99BesideBusyLoop, 1)} | ${s.failures.length === 0 ? 'none' : s.failures.join('; ')} |`,
  );
  const plans = run.sweeps.flatMap((s) =>
    s.plans.flatMap((p) => [
      `${due(s)}, \`${p.statement}\`${p.walksIndex ? '' : ' (**reads the table**)'}:`,
      '',
      '```',
      p.plan,
      '```',
      '',
    ]),
  );
  return [
    '## At scale',
    '',
    `A PostgreSQL ${run.serverVersion} cluster of the run's own (${run.settings.join(', ')}; fsync and synchronous_commit on). ` +
      "The record table is filled by retrysafe's own completion INSERT (and the bench's order table by its own), 50,000 rows a statement, " +
      'random UUIDv4 keys, so the primary key is built as random inserts build it. Each window: a checkpoint, ' +
      `warm-up, then ${count(run.transactions)} transactions on one connection with a CHECKPOINT halfway, so that it spans one. ` +
      `Load average ${fixed(run.loadBefore, 2)} before, ${fixed(run.loadAfter, 2)} after.`,
    '',
    '| records | shape | PostgreSQL CPU µs/key | WAL bytes/key | whole pages in WAL | tx/s |',
    '| ---: | --- | ---: | ---: | ---: | ---: |',
    ...costRows,
    '',
    ...KEY_SHAPES.map(([shape, label]) => `- \`${shape}\`: ${label}`),
    '',
    `Sweep passes (\`Sweeper.runOnce\`, batches of 500, default store time-out, \`maxRecordsPerSecond\` as the row says) over the largest table while B runs at ${run.sweepRate}/s; B's p99 over ten seconds before the pass, during it, and over ten seconds after it beside a busy loop: ` +
      "a process that does nothing but take the CPU the pass added (the cluster's and the bench process's, over what B alone takes), in slices of 20 ms. " +
      "That last figure is the machine's bound: what B's p99 becomes when that much CPU is taken by anything.",
    '',
    `Due records: \`oldest\`, ${LAYOUTS.oldest}; \`scattered\`, ${LAYOUTS.scattered}.`,
    '',
    '| due | swept | seconds | per second | pass CPU, cores | B p99 without, ms | B p99 during, ms | B p99 beside a busy loop of the pass CPU, ms | failed steps |',
    '| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |',
    ...sweepRows,
    '',
    ...plans,
    `Fill-and-sweep cycles: ${count(run.live)} records that stay, then each cycle fills ${count(run.live)} more already due, tombstones and deletes them through the store, and vacuums, ` +
      'while another connection commits one transaction after another, as a database in service does. ' +
      `WAL per tombstone ${fixed(median(run.tombstoneWal), 0)} bytes, per deleted tombstone ${fixed(median(run.deleteWal), 0)} (medians over cycles).`,
    '',
    '| cycle | heap bytes | index bytes |',
    '| ---: | ---: | ---: |',
    ...run.cycles.map((c) => `| ${c.cycle} | ${count(c.heapBytes)} | ${count(c.indexBytes)} |`),
    '',
    `On disk, tables and indexes: ${fixed(run.bytesPerRecord, 0)} bytes per record, ${fixed(run.bytesPerTombstone, 0)} per tombstone. ` +
      `1000 new keys/s with the default retention keep ${count(total.records)} records and ${count(total.tombstones)} tombstones: ` +
      `${fixed(total.bytes / 1e9, 0)} GB.`,
    '',
    '| goal | measured | target | met? |',
    '| --- | ---: | --- | --- |',
    ...scaleGoals(run).map((g) => `| ${g.label} | ${g.measured} | ${g.goal} | ${g.met ? 'met' : '**missed**'} |`),
    '',
  ];
}

const LAYOUTS: Record<DueLayout, string> = {
  oldest: 'the records that finished first, as a service has them (near each other in the heap)',
  scattered: 'chosen at random over the heap, each on a page of its own (the worst case)',
};

/** A pass's share due and where its records lie. */
const due = (pass: PassSpec): string =>
  `${pass.percentDue === 0 ? '0 % due' : `${pass.percentDue} % due, ${pass.layout}`}, ${pass.limit === undefined ? 'no limit' : `at most ${count(pass.limit)}/s`}`;

const count = (value: number | undefined): string =>
  value === undefined || !Number.isFinite(value) ? '' : Math.round(value).toLocaleString('en-US');
const fixed = (value: number, digits: number): string => (Number.isFinite(value) ? value.toFixed(digits) : '');
