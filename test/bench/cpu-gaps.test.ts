import { describe, expect, it } from 'vitest';
import type { Measurement } from '../../bench/measurement.js';
import { cpuGapResults, ratioResults } from '../../bench/report.js';

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
