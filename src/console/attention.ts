import { ageText } from '../core/age.js';
import type { StuckOperation } from '../store/maintenance-store.js';

/** What `retrysafe stuck` and the console's overview say when no operation needs attention. */
export const NOTHING_STUCK = 'No expired leases, no operations backing off and no unknown operations.';

/**
 * Why an operation needs attention, as `retrysafe stuck` and the overview
 * show it: its failures and the wait before its next attempt, if any, then
 * its reason, or else the last failed attempt's error.
 */
export function attentionReason(s: StuckOperation, now = Date.now()): string {
  const failures = [
    s.failures > 0 ? `${s.failures} failure${s.failures === 1 ? '' : 's'}` : '',
    s.kind === 'backing-off' && s.nextAttemptAt !== undefined
      ? `next attempt in ${ageText((s.nextAttemptAt.getTime() - now) / 1000)}`
      : '',
  ]
    .filter((part) => part !== '')
    .join(', ');
  return [failures, s.reason ?? s.lastError ?? ''].filter((part) => part !== '').join(': ');
}
