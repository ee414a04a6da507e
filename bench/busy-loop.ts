import { setTimeout as sleep } from 'node:timers/promises';

/**
 * A process that does nothing but take CPU: busy for `share` of every 20 ms
 * (`share` from argv, 0 to 1 of one core), resting the rest, until killed.
 * Beside a measured load it shows what that much CPU taken by anything costs
 * the load's latency on this machine, without a database in it.
 */
const PERIOD_MS = 20;
const share = Math.min(1, Math.max(0, Number(process.argv[2])));
for (;;) {
  const started = performance.now();
  while (performance.now() - started < share * PERIOD_MS);
  const rest = PERIOD_MS - (performance.now() - started);
  if (rest > 0) await sleep(rest);
}
