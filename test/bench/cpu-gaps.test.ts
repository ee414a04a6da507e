import { describe, expect, it } from 'vitest';
import type { Measurement } from '../../bench/measurement.js';
import { cpuGapResults, goalVerdict, ratioResults } from '../../bench/report.js';

const measured = (scenario: string, round: number, cpuMicros: number): Measurement => ({
  scenario,
  round,
  throughput: 200,
  latency: { p50: 1, p99: 2, max: 3 },
  cpuMicros,
  errors: 0,
});

describe("the bench's CPU gaps", () => {
  const measurements = [
    measured('A@200', 1, 400),
    measured('B@200', 1, 520),
    measured('A@200', 2, 380),
    measured('B@200', 2, 600),
    measured('A@200', 3, 410),
    measured('B@200', 3, 540),
    measured('R-A@200', 1, 900),
    measured('R-B@200', 1, 1000),
    measured('R-B@200', 2, 1300),
  ];

  it('subtracts within each round and takes the median, over rounds where both ran', () => {
    const results = new Map(cpuGapResults(measurements).map((r) => [`${r.gap.numerator}-${r.gap.denominator}`, r]));
    expect(results.get('B@200-A@200')).toMatchObject({ median: 130, min: 120, max: 220 });
    expect(results.get('R-B@200-R-A@200')).toMatchObject({ median: 100, min: 100, max: 100 });
    expect(results.has('Bp@200-A@200')).toBe(false);
  });

  it('leaves the ratio of the same two scenarios a ratio', () => {
    const ratio = ratioResults(measurements).find((r) => r.ratio.numerator === 'B@200' && r.ratio.metric === 'cpu');
    expect(ratio?.median).toBeCloseTo(1.317, 3);
  });
});

describe("the bench's ratio goals", () => {
  const rate = (scenario: string, round: number, throughput: number): Measurement => ({
    scenario,
    round,
    throughput,
    latency: { p50: 1, p99: 2, max: 3 },
    errors: 0,
  });
  const goalOf = (numerator: string, denominator: string, measurements: readonly Measurement[]) =>
    ratioResults(measurements).find((r) => r.ratio.numerator === numerator && r.ratio.denominator === denominator);

  it('holds a replay goal to every round, not to the median', () => {
    const rounds = [1.3, 1.2, 1.05].flatMap((ratio, i) => [
      rate('Cm', i + 1, ratio * 1000),
      rate('NI-replay', i + 1, 1000),
    ]);
    const result = goalOf('Cm', 'NI-replay', rounds);
    expect(result?.median).toBeCloseTo(1.2, 5);
    expect(result && goalVerdict(result)).toEqual({ goal: '≥ 1.1 in every round', met: false });
  });

  it('holds B/A to a share of its bound, round by round', () => {
    const rounds = [
      [0.5, 0.6],
      [0.58, 0.6],
      [0.59, 0.62],
    ].flatMap(([ratio, bound], i) => [
      rate('B', i + 1, (ratio ?? 0) * 1000),
      rate('A', i + 1, 1000),
      rate('GB-pgbench', i + 1, (bound ?? 0) * 1000),
      rate('GA-pgbench', i + 1, 1000),
    ]);
    const result = goalOf('B', 'A', rounds);
    // 0.83, 0.97, 0.95 of the bound: the median is 0.95.
    expect(result && goalVerdict(result)).toEqual({ goal: '≥ 0.95 of the bound', met: true });
  });
});
