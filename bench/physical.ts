import { median } from './latency.js';
import type { Measurement } from './measurement.js';
import type { PgbenchShape } from './pgbench.js';
import { WAL_PARTS, type WalParts } from './wal-parts.js';

/**
 * What PostgreSQL itself spends per new key, shape by shape, on a cluster of
 * the bench's own (`measure-physical.ts`): its processes' CPU and the WAL it
 * writes per transaction, which no other process on this machine can add to,
 * unlike a rate. The goals compare the bare transaction's cost with retrysafe's.
 */
export type ShapeId = 'bare' | 'key-row' | 'lock-key-row' | 'retrysafe' | 'unruled' | 'replay';

export interface PhysicalShape {
  readonly id: ShapeId;
  readonly label: string;
  readonly plan: PgbenchShape;
  /** A new key's transaction, compared with the bare one; a replay is shown beside them only. */
  readonly newKey: boolean;
  /** Run on a copy of the schema whose record table has no rules (`UNRULE_RECORDS`), not on retrysafe's own. */
  readonly unruled?: true;
}

/** In the order a round runs them. */
export const PHYSICAL_SHAPES: readonly PhysicalShape[] = [
  { id: 'bare', label: "A's: `BEGIN`, the order `INSERT`, `COMMIT`", plan: 'bare-insert', newKey: true },
  {
    id: 'key-row',
    label:
      'one more row with only its key (a narrow table, its primary key), sent with `COMMIT`, no lock: the least a record adds',
    plan: 'insert-key-row',
    newKey: true,
  },
  {
    id: 'lock-key-row',
    label: "the same with the identity's advisory lock, as plain SQL, sent with `BEGIN`",
    plan: 'lock-insert-key-row',
    newKey: true,
  },
  {
    id: 'retrysafe',
    label:
      "B's, as retrysafe sends it on node-postgres: its claim with `BEGIN`, the order `INSERT`, its record with `COMMIT`",
    plan: 'pipelined-claim-insert-complete',
    newKey: true,
  },
  {
    id: 'unruled',
    label:
      "B's again, on a copy of the schema whose record table keeps no rules (its columns' domains replaced by their base types, its CHECK dropped): what the rules cost, which retrysafe keeps",
    plan: 'pipelined-claim-insert-complete',
    newKey: true,
    unruled: true,
  },
  {
    id: 'replay',
    label: 'a replay, as retrysafe sends it: the one read of an existing record, no transaction',
    plan: 'read-record',
    newKey: false,
  },
];

/** One shape's run of a fixed number of transactions on one connection, per transaction. */
export interface ShapeRound {
  readonly shape: ShapeId;
  readonly round: number;
  /** User plus system CPU time of all the cluster's processes. */
  readonly cpuMicros: number;
  readonly walBytes: number;
  readonly walRecords: number;
  /** `walBytes` by what wrote it (`wal-parts.ts`). */
  readonly walParts: WalParts;
  /** Whole pages written to the WAL, as the first change of a page after a checkpoint is: none once warmed up. */
  readonly fullPageImages: number;
  /** pgbench's rate, without the time it took to connect. */
  readonly tps: number;
}

/** The Node servers held at the same request rate: A (the bare endpoint) and B (retrysafe, new keys), their CPU per request. */
export const NODE_SCENARIOS = { bare: 'A@200', retrysafe: 'B@200' } as const;

export interface PhysicalRun {
  readonly serverVersion: string;
  /** The private cluster's settings besides PostgreSQL's defaults. */
  readonly settings: readonly string[];
  readonly transactions: number;
  readonly warmupTransactions: number;
  readonly nodeSeconds: number;
  readonly shapes: readonly ShapeRound[];
  /** A@200 and B@200, each round, on the same cluster. */
  readonly node: readonly Measurement[];
}

interface Goal {
  readonly label: string;
  /** The figure of one round, undefined where a side was not measured. */
  readonly figure: (round: number) => number | undefined;
  readonly limit: { readonly atLeast: number } | { readonly atMost: number };
  /** What the figure would be with the least record (one more row with only its key), and how near retrysafe comes to it. */
  readonly bound?: (round: number) => number | undefined;
  readonly toBound?: (round: number) => number | undefined;
}

/** A goal's figure over the rounds. */
export interface GoalResult {
  readonly label: string;
  readonly median: number;
  readonly min: number;
  readonly max: number;
  readonly bound: number | undefined;
  readonly toBound: number | undefined;
  readonly goal: string;
  readonly met: boolean;
}

const divide = (top: number | undefined, bottom: number | undefined): number | undefined =>
  top === undefined || bottom === undefined || bottom === 0 ? undefined : top / bottom;

function goals(run: PhysicalRun): Goal[] {
  const shape = (id: ShapeId, round: number): ShapeRound | undefined =>
    run.shapes.find((s) => s.shape === id && s.round === round);
  const cpu = (id: ShapeId) => (round: number) => shape(id, round)?.cpuMicros;
  const wal = (id: ShapeId) => (round: number) => shape(id, round)?.walBytes;
  const node = (id: string) => (round: number) =>
    run.node.find((m) => m.scenario === id && m.round === round)?.cpuMicros;
  const over =
    (top: (round: number) => number | undefined, bottom: (round: number) => number | undefined) => (round: number) =>
      divide(top(round), bottom(round));
  return [
    {
      label: 'PostgreSQL CPU per new key, bare/retrysafe',
      figure: over(cpu('bare'), cpu('retrysafe')),
      limit: { atLeast: 0.65 },
      bound: over(cpu('bare'), cpu('key-row')),
      toBound: over(cpu('key-row'), cpu('retrysafe')),
    },
    {
      label: 'WAL bytes per new key, bare/retrysafe',
      figure: over(wal('bare'), wal('retrysafe')),
      limit: { atLeast: 0.33 },
      bound: over(wal('bare'), wal('key-row')),
      toBound: over(wal('key-row'), wal('retrysafe')),
    },
    {
      label: `Node CPU per new key, retrysafe/bare (${NODE_SCENARIOS.retrysafe}/${NODE_SCENARIOS.bare})`,
      figure: over(node(NODE_SCENARIOS.retrysafe), node(NODE_SCENARIOS.bare)),
      limit: { atMost: 1.5 },
    },
  ];
}

const rounds = (run: PhysicalRun): number[] => [...new Set(run.shapes.map((s) => s.round))].sort((a, b) => a - b);

/** Each goal's figure in every round where both sides ran, summarised by the median. */
export function goalResults(run: PhysicalRun): GoalResult[] {
  const measured = rounds(run);
  const middle = (pick: ((round: number) => number | undefined) | undefined): number | undefined => {
    const values = pick === undefined ? [] : defined(measured.map(pick));
    return values.length === 0 ? undefined : median(values);
  };
  return goals(run).flatMap((goal) => {
    const values = defined(measured.map(goal.figure));
    if (values.length === 0) return [];
    const value = median(values);
    const [goalText, met] =
      'atLeast' in goal.limit
        ? [`≥ ${goal.limit.atLeast}`, value >= goal.limit.atLeast]
        : [`≤ ${goal.limit.atMost}`, value <= goal.limit.atMost];
    return [
      {
        label: goal.label,
        median: value,
        min: Math.min(...values),
        max: Math.max(...values),
        bound: middle(goal.bound),
        toBound: middle(goal.toBound),
        goal: goalText,
        met,
      },
    ];
  });
}

/** The report's section: each shape's cost, the Node servers', and the goals. */
export function renderPhysical(run: PhysicalRun): string[] {
  const count = rounds(run).length;
  const bareOf = (pick: (s: ShapeRound) => number) => median(run.shapes.filter((s) => s.shape === 'bare').map(pick));
  const shapeRows = PHYSICAL_SHAPES.flatMap((shape) => {
    const measured = run.shapes.filter((s) => s.shape === shape.id);
    if (measured.length === 0) return [];
    const cpu = measured.map((s) => s.cpuMicros);
    const wal = median(measured.map((s) => s.walBytes));
    const cells = [
      shape.id,
      shape.label,
      `${fixed(median(cpu), 0)} (${fixed(Math.min(...cpu), 0)}–${fixed(Math.max(...cpu), 0)})`,
      shape.newKey ? fixed(bareOf((s) => s.cpuMicros) / median(cpu), 2) : '',
      fixed(wal, 0),
      shape.newKey ? fixed(bareOf((s) => s.walBytes) / wal, 2) : '',
      `${fixed(median(measured.map((s) => s.walRecords)), 1)} (${fixed(median(measured.map((s) => s.fullPageImages)), 2)})`,
      fixed(median(measured.map((s) => s.tps)), 0),
    ];
    return [`| ${cells.join(' | ')} |`];
  });
  const nodeRows = Object.values(NODE_SCENARIOS).flatMap((id) => {
    const measured = run.node.filter((m) => m.scenario === id);
    const cpu = defined(measured.map((m) => m.cpuMicros));
    if (cpu.length === 0) return [];
    return [
      `| ${id} | ${fixed(median(cpu), 0)} (${fixed(Math.min(...cpu), 0)}–${fixed(Math.max(...cpu), 0)}) | ${fixed(median(measured.map((m) => m.throughput)), 0)} |`,
    ];
  });
  const partRows = PHYSICAL_SHAPES.flatMap((shape) => {
    const measured = run.shapes.filter((s) => s.shape === shape.id);
    if (measured.length === 0) return [];
    const cells = WAL_PARTS.map(([part]) => fixed(median(measured.map((s) => s.walParts[part])), 0));
    return [`| ${shape.id} | ${cells.join(' | ')} | ${fixed(median(measured.map((s) => s.walBytes)), 0)} |`];
  });
  return [
    "## PostgreSQL's cost per new key",
    '',
    `Measured on a PostgreSQL ${run.serverVersion} cluster of the run's own (its own port and data directory; PostgreSQL's defaults but ${run.settings.join(', ')}), ` +
      `so that no other client's work is counted. Each shape: a checkpoint, ${run.warmupTransactions} transactions of warm-up, then ${run.transactions} transactions from pgbench on one connection, prepared. ` +
      "**CPU**: user plus system time of all the cluster's processes (`/proc/<pid>/stat` of the postmaster and every child, and the postmaster's waited-for children, ending with pgbench's backend), per transaction; " +
      "it includes that backend's start and exit, once per run, and is shared with the rest of the machine's load, so it moves from run to run. " +
      '**WAL**: `pg_current_wal_lsn()` after the run less before, per transaction: exact, the same in every run but for a few bytes; its records and whole-page images from `pg_stat_wal`. ' +
      `Medians over ${count} round${count === 1 ? '' : 's'}, range in brackets; ratios are taken within a round.`,
    '',
    '| shape | transaction | PostgreSQL CPU µs/tx | bare/this | WAL bytes/tx | bare/this | WAL records/tx (whole pages) | pgbench tx/s |',
    '| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |',
    ...shapeRows,
    '',
    "The same WAL bytes per transaction by what wrote them, from `pg_waldump --stats=record` over each shape's window (medians): " +
      "the heap's records (each row written), the index entries, the index pages split, the commit records, and the rest: " +
      "every record's padding to 8 bytes, the WAL pages' headers and any other record.",
    '',
    `| shape | ${WAL_PARTS.map(([, heading]) => heading).join(' | ')} | total |`,
    `| --- |${' ---: |'.repeat(WAL_PARTS.length + 1)}`,
    ...partRows,
    '',
    `The Node servers held at the same load, ${run.nodeSeconds} s at 200 requests per second after 1 s of warm-up, on the same cluster: CPU per request of the server process (\`process.cpuUsage\`).`,
    '',
    '| server | Node CPU µs per request | req/s |',
    '| --- | ---: | ---: |',
    ...nodeRows,
    '',
    '| goal | measured | range | with one more row (bare/key-row) | retrysafe against one more row (key-row/retrysafe) | met? |',
    '| --- | ---: | --- | ---: | ---: | --- |',
    ...goalResults(run).map(
      (g) =>
        `| ${g.label} ${g.goal} | ${fixed(g.median, 2)} | ${fixed(g.min, 2)}–${fixed(g.max, 2)} | ${g.bound === undefined ? '' : fixed(g.bound, 2)} | ${g.toBound === undefined ? '' : fixed(g.toBound, 2)} | ${g.met ? 'met' : '**missed**'} |`,
    ),
    '',
  ];
}

const defined = (values: readonly (number | undefined)[]): number[] =>
  values.filter((v): v is number => v !== undefined && Number.isFinite(v));
const fixed = (value: number, digits: number): string => (Number.isFinite(value) ? value.toFixed(digits) : '');
