/** Longer timeouts overflow and fire at once in browsers and Node alike. */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/** Calls `fire` after `ms`, unless disarmed first. Past MAX_TIMER_MS (or Infinity) it never fires. */
export function armTimer(ms: number, fire: () => void): () => void {
  if (!(ms <= MAX_TIMER_MS)) return () => {};
  const handle = setTimeout(fire, Math.max(0, ms));
  return () => clearTimeout(handle);
}
