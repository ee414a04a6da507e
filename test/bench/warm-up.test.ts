import { describe, expect, it } from 'vitest';
import { HELD_RATE_WARMUP_REQUESTS, warmUpOf } from '../../bench/measure.js';
import { SCENARIOS, type HttpScenario } from '../../bench/scenarios.js';

const scenario = (id: string): HttpScenario => {
  const found = SCENARIOS.find((s): s is HttpScenario => s.id === id && s.kind === 'http');
  if (found === undefined) throw new Error(id);
  return found;
};

describe("a scenario's warm-up", () => {
  it('runs at full load for the warm-up seconds when the window is at full load too', () => {
    expect(warmUpOf(scenario('B'), 1)).toEqual({ seconds: 1 });
  });

  it('runs a held-rate scenario at full load for a count of requests, so that V8 has compiled the route', () => {
    for (const id of ['A@200', 'B@200', 'R-B@200']) {
      const warmUp = warmUpOf(scenario(id), 1);
      expect(warmUp).toEqual({ requests: HELD_RATE_WARMUP_REQUESTS });
      expect(warmUp).not.toHaveProperty('rate');
    }
    expect(HELD_RATE_WARMUP_REQUESTS).toBeGreaterThanOrEqual(10_000);
  });
});
