import { setTimeout as sleep } from 'node:timers/promises';

export interface WaitOptions {
  /** What the test waits for, as the failure names it; the condition's source text when left out. */
  readonly what?: string;
  /** Only turns a hang into a failure: never a bound on how long the condition may take. */
  readonly limitMs?: number;
}

// Generous, so that a busy machine slows a test down rather than failing it.
const LIMIT_MS = 60_000;
// A short first interval keeps fast conditions fast; the cap keeps a slow one from hammering what it polls.
const FIRST_INTERVAL_MS = 5;
const LONGEST_INTERVAL_MS = 100;

/**
 * Polls `condition` until it returns true, instead of pausing a fixed time. A condition that throws has not held
 * yet: it is polled again, and the failure at the limit names what was awaited and the last result or error seen.
 */
export async function waitFor(
  condition: () => boolean | Promise<boolean>,
  { what = String(condition), limitMs = LIMIT_MS }: WaitOptions = {},
): Promise<void> {
  const deadline = Date.now() + limitMs;
  let interval = FIRST_INTERVAL_MS;
  for (;;) {
    let last: string;
    try {
      if (await condition()) return;
      last = 'it was still false';
    } catch (error) {
      last = `it last threw ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`;
    }
    if (Date.now() > deadline) throw new Error(`Waited ${limitMs} ms for ${what}; ${last}.`);
    await sleep(interval);
    interval = Math.min(interval * 2, LONGEST_INTERVAL_MS);
  }
}
