import type { LatencySummary } from '../latency.js';

/** What the database's ceiling loop measured, sent to the parent when it is done. */
export interface CeilingResult {
  readonly transactions: number;
  readonly seconds: number;
  readonly latency: LatencySummary;
  readonly cpuMicros: number;
  readonly maxRssBytes: number;
  readonly roundTrips: number;
  /** Transactions whose claim found an existing record: 0 unless keys collided. */
  readonly unclaimed: number;
}

export interface CeilingMessage {
  readonly type: 'ceiling';
  readonly result: CeilingResult;
}

export function isCeilingMessage(value: unknown): value is CeilingMessage {
  return typeof value === 'object' && value !== null && (value as { type?: unknown }).type === 'ceiling';
}

/** The transaction each iteration runs. */
export type CeilingPlan =
  /** BEGIN, retrysafe's claim, retrysafe's completion, COMMIT: scenario B without HTTP and without the order. */
  | 'claim-complete'
  /** BEGIN, the claim, the order INSERT, the completion, COMMIT: scenario B's whole transaction without HTTP. */
  | 'claim-insert-complete'
  /** BEGIN, the order INSERT, COMMIT: scenario A without HTTP. */
  | 'bare-insert';

const PLANS: Record<CeilingPlan, true> = { 'claim-complete': true, 'claim-insert-complete': true, 'bare-insert': true };

export const isCeilingPlan = (value: string): value is CeilingPlan => Object.hasOwn(PLANS, value);
