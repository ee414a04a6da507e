import { operations } from './0001_operations.js';
import { leases } from './0002_leases.js';
import { outboxInbox } from './0003_outbox_inbox.js';
import { hotCompletion } from './0004_hot_completion.js';
import { domainChecks } from './0005_domain_checks.js';
import { stepStartsAndBackoff } from './0006_step_starts_and_backoff.js';
import { writeOnce } from './0007_write_once.js';
import { principal } from './0008_principal.js';
import { oneSweepIndex } from './0009_one_sweep_index.js';
import { operatorActions } from './0010_operator_actions.js';
import { parkedWebhookEvents } from './0011_parked_webhook_events.js';
import { claimReadAfterLock } from './0012_claim_read_after_lock.js';
import { activity } from './0013_activity.js';
import { claimLockKeyAndTimeout } from './0014_claim_lock_key_and_timeout.js';
import { failedActivity } from './0015_failed_activity.js';
import { lastError } from './0016_last_error.js';
import { operationsAutovacuum } from './0017_operations_autovacuum.js';
import { textTenant } from './0018_text_tenant.js';
import { claimOnTheShard } from './0019_claim_on_the_shard.js';
import { hotTombstones } from './0020_hot_tombstones.js';
import { tombstoneRoom } from './0021_tombstone_room.js';
import { breakResponseExpiryTies } from './0022_break_response_expiry_ties.js';
import type { Migration } from './migration.js';

export { latestVersion, type Migration } from './migration.js';

/**
 * Every migration this version knows, in order. Modules rather than files
 * read at run time, so that bundlers carry them along.
 */
export const migrations: readonly Migration[] = [
  operations,
  leases,
  outboxInbox,
  hotCompletion,
  domainChecks,
  stepStartsAndBackoff,
  writeOnce,
  principal,
  oneSweepIndex,
  operatorActions,
  parkedWebhookEvents,
  claimReadAfterLock,
  activity,
  claimLockKeyAndTimeout,
  failedActivity,
  lastError,
  operationsAutovacuum,
  textTenant,
  claimOnTheShard,
  hotTombstones,
  tombstoneRoom,
  breakResponseExpiryTies,
];
