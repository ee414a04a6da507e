import type { LatencySummary } from './latency.js';

/** Whether a scenario kept its promise of at most one effect per key, and what was counted. */
export interface Verdict {
  readonly ok: boolean;
  readonly text: string;
}

/** One scenario in one round. Per-request figures are undefined where they cannot be measured. */
export interface Measurement {
  readonly scenario: string;
  readonly round: number;
  /** Requests (or ceiling transactions) per second. */
  readonly throughput: number;
  readonly latency: LatencySummary;
  readonly pgRoundTrips?: number;
  readonly redisCommands?: number;
  /** Server (or ceiling loop) CPU time, user plus system, per request. */
  readonly cpuMicros?: number;
  readonly peakRssBytes?: number;
  /** Responses by status code. */
  readonly statuses?: Readonly<Record<string, number>>;
  readonly errors: number;
  readonly verdict?: Verdict;
}
