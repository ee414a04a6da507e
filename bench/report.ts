import type { ChartData } from './chart.js';
import type { UpdateStats } from './database.js';
import { median } from './latency.js';
import type { Machine } from './machine.js';
import type { Measurement } from './measurement.js';
import { HELD_RATE_WARMUP_REQUESTS } from './measure.js';
import type { BenchOptions } from './options.js';
import { type PhysicalRun, renderPhysical } from './physical.js';
import type { PlaceTime, SelfTime } from './profile-summary.js';
import { renderScale, type ScaleRun } from './scale.js';
import type { Source } from './source.js';
import { CPU_GAPS, type CpuGap, RATIOS, type Ratio, SCENARIOS, type Scenario } from './scenarios.js';

/** A CPU profile of one scenario's measured window. */
export interface ProfileReport {
  readonly scenario: string;
  readonly throughput: number;
  readonly cpuMicros: number | undefined;
  readonly file: string;
  readonly top: readonly SelfTime[];
  readonly places: readonly PlaceTime[];
}

export interface RunReport {
  readonly command: string;
  readonly startedAt: Date;
  readonly finishedAt: Date;
  readonly machine: Machine;
  readonly source: Source;
  readonly loadAverages: { readonly before: number; readonly after: number };
  readonly options: BenchOptions;
  readonly scenarios: readonly Scenario[];
  readonly measurements: readonly Measurement[];
  readonly profiles: readonly ProfileReport[];
  readonly updateStats: readonly UpdateStats[];
  /** PostgreSQL's cost per new key, on a cluster of the run's own; undefined when it was not measured. */
  readonly physical: PhysicalRun | undefined;
  /** retrysafe at production sizes (`--only scale`); undefined when it was not measured. */
  readonly scale?: ScaleRun | undefined;
}

/** A ratio computed per round and summarised by its median. */
export interface RatioResult {
  readonly ratio: Ratio;
  readonly median: number;
  readonly min: number;
  readonly max: number;
  readonly rounds: number;
  /** The median of its bound, when it has one and it was measured. */
  readonly bound: number | undefined;
  /** The median over rounds of the ratio over its bound in the same round, when the bound was measured. */
  readonly toBound: number | undefined;
}

/** `numerator`/`denominator` (or what `combine` makes of them) by `metric`, keyed by round, in each round where both ran. */
function byRound(
  measurements: readonly Measurement[],
  numerator: string,
  denominator: string,
  metric: (m: Measurement) => number,
  combine: (top: number, bottom: number) => number = (top, bottom) => top / bottom,
): Map<number, number> {
  const values = new Map<number, number>();
  for (const top of measurements.filter((m) => m.scenario === numerator)) {
    const bottom = measurements.find((m) => m.scenario === denominator && m.round === top.round);
    const value = bottom === undefined ? Number.NaN : combine(metric(top), metric(bottom));
    if (Number.isFinite(value)) values.set(top.round, value);
  }
  return values;
}

export function ratioResults(measurements: readonly Measurement[]): RatioResult[] {
  const results: RatioResult[] = [];
  const throughput = (m: Measurement): number => m.throughput;
  for (const ratio of RATIOS) {
    const values = byRound(
      measurements,
      ratio.numerator,
      ratio.denominator,
      ratio.metric === 'cpu' ? cpuMicros : throughput,
    );
    if (values.size === 0) continue;
    const bounds =
      ratio.bound === undefined
        ? new Map<number, number>()
        : byRound(measurements, ratio.bound.numerator, ratio.bound.denominator, throughput);
    const toBound = [...values].flatMap(([round, value]) => {
      const bound = bounds.get(round);
      return bound === undefined ? [] : [value / bound];
    });
    const all = [...values.values()];
    results.push({
      ratio,
      median: median(all),
      min: Math.min(...all),
      max: Math.max(...all),
      rounds: all.length,
      bound: bounds.size > 0 ? median([...bounds.values()]) : undefined,
      toBound: toBound.length > 0 ? median(toBound) : undefined,
    });
  }
  return results;
}

/** A ratio's goal as the report states it, and whether the run met it; undefined for a ratio without one. */
export function goalVerdict(result: RatioResult): { readonly goal: string; readonly met: boolean } | undefined {
  const { goal } = result.ratio;
  if (goal === undefined) return undefined;
  if ('ofBound' in goal)
    return {
      goal: `≥ ${goal.ofBound} of the bound`,
      met: result.toBound !== undefined && result.toBound >= goal.ofBound,
    };
  return goal.everyRound === true
    ? { goal: `≥ ${goal.atLeast} in every round`, met: result.min >= goal.atLeast }
    : { goal: `≥ ${goal.atLeast}`, met: result.median >= goal.atLeast };
}

/** A CPU gap computed per round (µs per request) and summarised by its median. */
export interface CpuGapResult {
  readonly gap: CpuGap;
  readonly median: number;
  readonly min: number;
  readonly max: number;
}

const cpuMicros = (m: Measurement): number => m.cpuMicros ?? Number.NaN;

export function cpuGapResults(measurements: readonly Measurement[]): CpuGapResult[] {
  return CPU_GAPS.flatMap((gap) => {
    const values = [
      ...byRound(measurements, gap.numerator, gap.denominator, cpuMicros, (top, bottom) => top - bottom).values(),
    ];
    return values.length === 0
      ? []
      : [{ gap, median: median(values), min: Math.min(...values), max: Math.max(...values) }];
  });
}

/** The chart's figures: each scenario's median rate, and the bound on each ratio that has one. */
export function chartData(report: RunReport): ChartData {
  const throughput: Record<string, number> = {};
  for (const scenario of report.scenarios) {
    const rates = report.measurements.filter((m) => m.scenario === scenario.id).map((m) => m.throughput);
    if (rates.length > 0) throughput[scenario.id] = median(rates);
  }
  const bounds: Record<string, number> = {};
  for (const result of ratioResults(report.measurements))
    if (result.bound !== undefined) bounds[`${result.ratio.numerator}/${result.ratio.denominator}`] = result.bound;
  const caption = `Medians of ${report.options.rounds} rounds, ${report.startedAt.toISOString().slice(0, 10)}, ${report.machine.cores} cores shared by the server, PostgreSQL and the load; only ratios within a round are compared.`;
  return { throughput, bounds, caption };
}

/** retrysafe scenarios whose correctness check failed in some round, those of the physical measurement included. */
export function failures(report: RunReport): Measurement[] {
  const ours = new Set(SCENARIOS.filter((s) => s.kind === 'http' && s.guarantee === 'retrysafe').map((s) => s.id));
  return [...report.measurements, ...(report.physical?.node ?? [])].filter(
    (m) => ours.has(m.scenario) && m.verdict?.ok === false,
  );
}

export function renderMarkdown(report: RunReport): string {
  const { machine, options } = report;
  const minutes = (report.finishedAt.getTime() - report.startedAt.getTime()) / 60_000;
  const lines = [
    '# retrysafe benchmark',
    '',
    `Command: \`${report.command}\`, ${report.startedAt.toISOString()}, ${minutes.toFixed(1)} minutes. ` +
      `Code: commit ${report.source.commit}${report.source.changedFiles > 0 ? ` with ${report.source.changedFiles} files under src/ changed and not committed` : ''}.`,
    '',
    `Machine: ${machine.cpu}, ${machine.cores} cores, ${machine.memoryGiB} GiB, ${machine.os}; Node ${machine.node}; PostgreSQL ${machine.postgres}; Redis ${machine.redis}. ` +
      `Load average (1 min) ${report.loadAverages.before.toFixed(1)} at the start, ${report.loadAverages.after.toFixed(1)} at the end: the machine was shared, so only ratios taken within one round are compared.`,
    '',
    `Settings: ${options.rounds} rounds; per scenario ${options.warmupSeconds} s warm-up (a held rate: ${HELD_RATE_WARMUP_REQUESTS} responses at full load) then ${options.seconds} s measured; ${options.connections} HTTP connections (storms ${options.stormConnections}); ` +
      `server pg Pool of ${options.poolSize}; ${options.replayKeys} keys replayed in C; ${options.stormKeys} keys in a storm.`,
    '',
    ...ratioSection(report.measurements),
    ...cpuGapSection(report.measurements),
    ...(report.physical === undefined ? [] : renderPhysical(report.physical)),
    ...(report.scale === undefined ? [] : renderScale(report.scale)),
    ...scenarioSection(report),
    ...updateSection(report.updateStats),
    ...profileSection(report.profiles),
  ];
  return `${lines.join('\n')}\n`;
}

function ratioSection(measurements: readonly Measurement[]): string[] {
  if (measurements.length === 0) return [];
  return [
    '## Ratios',
    '',
    'Throughput of one scenario over another (CPU time per request where marked), computed in each round and summarised by the median (range over rounds).',
    '',
    "The bound is what the ratio can reach here whatever retrysafe's code does. For new keys it is the database's: the same ratio for the two transactions alone, driven by pgbench (8 clients, prepared). " +
      "For replays it is Fastify's: Am, the bare endpoint answering each key from a Map with no check at all, in retrysafe's place.",
    '',
    '| ratio | compares | median | range | bound | goal |',
    '| --- | --- | ---: | --- | ---: | --- |',
    ...ratioResults(measurements).map((r) => {
      const verdict = goalVerdict(r);
      const goal = verdict === undefined ? '' : `${verdict.goal} ${verdict.met ? 'met' : '**missed**'}`;
      const bound =
        r.bound === undefined
          ? ''
          : `${r.bound.toFixed(2)} (${r.ratio.bound?.numerator}/${r.ratio.bound?.denominator})`;
      return `| ${r.ratio.numerator}/${r.ratio.denominator}${r.ratio.metric === 'cpu' ? ' (CPU)' : ''} | ${r.ratio.meaning} | ${r.median.toFixed(2)} | ${r.min.toFixed(2)}–${r.max.toFixed(2)} | ${bound} | ${goal} |`;
    }),
    '',
  ];
}

function cpuGapSection(measurements: readonly Measurement[]): string[] {
  const results = cpuGapResults(measurements);
  if (results.length === 0) return [];
  return [
    '## CPU per request at the same load',
    '',
    "The server's CPU per request, both scenarios held at the same rate, one minus the other in each round: what retrysafe adds to a route in µs.",
    '',
    '| difference | compares | median µs | range | goal |',
    '| --- | --- | ---: | --- | --- |',
    ...results.map(
      ({ gap, median: middle, min, max }) =>
        `| ${gap.numerator} − ${gap.denominator} | ${gap.meaning} | ${middle.toFixed(0)} | ${min.toFixed(0)}–${max.toFixed(0)} | ≤ ${gap.atMost} ${middle <= gap.atMost ? 'met' : '**missed**'} |`,
    ),
    '',
  ];
}

function scenarioSection(report: RunReport): string[] {
  if (report.measurements.length === 0) return [];
  return [
    '## Scenarios',
    '',
    'Medians over rounds. Per-request figures are counted in the server process between two samples taken with no request in flight; ' +
      'ceilings count per transaction. Latency is what the load generator saw (autocannon, 1 ms resolution; ceilings time each transaction).',
    '',
    '| id | scenario | req/s | p50 ms | p99 ms | max ms | PG round trips | Redis commands | CPU µs | peak RSS MB | answers | at most one order per key |',
    '| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- | --- |',
    ...report.scenarios.flatMap((scenario) =>
      scenarioRow(
        scenario,
        report.measurements.filter((m) => m.scenario === scenario.id),
      ),
    ),
    '',
  ];
}

function scenarioRow(scenario: Scenario, rounds: readonly Measurement[]): string[] {
  if (rounds.length === 0) return [];
  const middle = (pick: (m: Measurement) => number | undefined): number | undefined => {
    const values = rounds.map(pick).filter((v): v is number => v !== undefined);
    return values.length === 0 ? undefined : median(values);
  };
  const peak = Math.max(...rounds.map((m) => m.peakRssBytes ?? 0));
  const label = scenario.kind === 'http' ? `${scenario.label} (${scenario.framework})` : scenario.label;
  const cells = [
    scenario.id,
    label,
    number(
      middle((m) => m.throughput),
      0,
    ),
    number(middle((m) => m.latency.p50)),
    number(middle((m) => m.latency.p99)),
    number(middle((m) => m.latency.max)),
    number(
      middle((m) => m.pgRoundTrips),
      2,
    ),
    scenario.kind === 'http'
      ? number(
          middle((m) => m.redisCommands),
          2,
        )
      : '',
    number(
      middle((m) => m.cpuMicros),
      0,
    ),
    peak > 0 ? number(peak / 2 ** 20, 0) : '',
    answers(rounds.at(-1)),
    verdicts(rounds),
  ];
  return [`| ${cells.join(' | ')} |`];
}

function updateSection(stats: readonly UpdateStats[]): string[] {
  if (stats.length === 0) return [];
  return [
    '## Updates in the database',
    '',
    'Over the whole run. A HOT update writes no new index entries; an update that changes an indexed column, or a column in a partial index predicate, cannot be HOT.',
    '',
    '| table | updates | HOT |',
    '| --- | ---: | ---: |',
    ...stats.map(
      (s) =>
        `| ${s.table} | ${s.updates} | ${s.hotUpdates} (${percent(s.updates === 0 ? 0 : s.hotUpdates / s.updates)}) |`,
    ),
    '',
  ];
}

function profileSection(profiles: readonly ProfileReport[]): string[] {
  if (profiles.length === 0) return [];
  return [
    '## Where the server spends its time',
    '',
    'CPU profiles of the server during the measured window of one extra run each (the profiler slows it down; these runs are not in the tables above). ' +
      'Shares of the busy samples: waiting in the event loop is left out. Samples are taken on wall time, so on a busy machine a socket write that ' +
      'wakes PostgreSQL keeps the samples of the time the scheduler gave to other processes.',
    '',
    ...profiles.flatMap((profile) => [
      `### ${profile.scenario}: ${number(profile.throughput, 0)} req/s while profiled, ${number(profile.cpuMicros, 0)} µs CPU per request`,
      '',
      `By place: ${profile.places
        .slice(0, 8)
        .map((p) => `${p.where} ${p.percent.toFixed(1)}%`)
        .join(', ')}.`,
      '',
      '| self time | function | where |',
      '| ---: | --- | --- |',
      ...profile.top.map((t) => `| ${t.percent.toFixed(1)}% | \`${t.name}\` | ${t.where} |`),
      '',
    ]),
  ];
}

function answers(measurement: Measurement | undefined): string {
  const statuses = Object.entries(measurement?.statuses ?? {});
  const total = statuses.reduce((sum, [, count]) => sum + count, 0);
  if (total === 0) return '';
  const shares = statuses.map(([code, count]) => `${code} ${percent(count / total)}`).join(', ');
  return (measurement?.errors ?? 0) > 0 ? `${shares}; ${measurement?.errors} errors` : shares;
}

function verdicts(rounds: readonly Measurement[]): string {
  const judged = rounds.filter((m) => m.verdict !== undefined);
  if (judged.length === 0) return '';
  const failed = judged.filter((m) => m.verdict?.ok === false);
  if (failed.length === 0) return `yes: ${judged.at(-1)?.verdict?.text}, every round`;
  return `**no** in ${failed.length} of ${judged.length} rounds: ${failed.map((m) => `r${m.round} ${m.verdict?.text}`).join('; ')}`;
}

function number(value: number | undefined, digits?: number): string {
  if (value === undefined || !Number.isFinite(value)) return '';
  return value.toFixed(digits ?? (Math.abs(value) >= 100 ? 0 : Math.abs(value) >= 10 ? 1 : 2));
}

function percent(share: number): string {
  return share >= 0.995 || share === 0
    ? `${Math.round(share * 100)}%`
    : `${(share * 100).toFixed(share < 0.01 ? 1 : 0)}%`;
}
