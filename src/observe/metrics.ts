import type { Observer, RetrysafeEvent } from '../core/events.js';
import type { OperationIdentity } from '../core/identity.js';
import { ExposedCounter, ExposedHistogram, type Labels, type RegistryLike } from './exposed-metric.js';
import { extend } from '../core/extend.js';

export interface MetricsOptions {
  /** Prepended to every metric name. Default `retrysafe_`. */
  readonly prefix?: string;
  /** Upper bounds of the lock-wait histogram, in seconds. */
  readonly lockWaitBuckets?: readonly number[];
}

export const defaultLockWaitBuckets: readonly number[] = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];

/**
 * An observer that counts what happens to requests, on the application's
 * prom-client registry. Labels are bounded and carry no tenant and no key:
 * `operation` (the route's operation name), `mode`, `code`, `status_class` and
 * `outcome` (how an attempt ended, a fixed set).
 */
export function metricsObserver(registry: RegistryLike, options: MetricsOptions = {}): Observer {
  const prefix = options.prefix ?? 'retrysafe_';
  const counter = (name: string, help: string): ExposedCounter =>
    new ExposedCounter(`${prefix}${name}`, help).register(registry);
  const claimed = counter(
    'operations_claimed_total',
    'New operations: first attempts that claimed their key, by mode.',
  );
  const finished = counter('operations_finished_total', 'Attempts whose handler answered, by mode and status class.');
  const attempts = counter(
    'attempts_total',
    'Attempts by how they ended, in every mode: completed, not-stored, threw, replayed, unknown and the rest.',
  );
  const replays = counter('replays_total', 'Retries answered with the stored response.');
  const mismatches = counter('fingerprint_mismatches_total', 'Keys reused with a different request (422).');
  const conflicts = counter('conflicts_total', 'Duplicates that found the first attempt still running (409).');
  const fenced = counter('fenced_writes_total', 'Writes refused because the worker had lost its lease.');
  const takeOvers = counter('take_overs_total', 'Expired leases taken over by a retry or a recovery worker.');
  const released = counter(
    'attempts_released_total',
    'Leased attempts that failed after a step and were kept for a later attempt.',
  );
  const unknown = counter('unknown_outcomes_total', 'Operations marked unknown: they need reconciliation.');
  const storeErrors = counter('store_errors_total', 'Requests answered 503 because the store failed or was too slow.');
  const problems = counter('problems_total', 'Answers retrysafe gave itself, by problem code.');
  const lockWait = new ExposedHistogram(
    `${prefix}lock_wait_seconds`,
    'How long an atomic duplicate waited behind a concurrent attempt.',
    options.lockWaitBuckets ?? defaultLockWaitBuckets,
  ).register(registry);

  return function countEvent(event: RetrysafeEvent): void {
    switch (event.type) {
      case 'claimed':
        return claimed.inc(extend(operationOf(event.identity), { mode: event.mode }));
      case 'finished':
        return finished.inc(
          extend(operationOf(event.identity), {
            mode: event.mode,
            status_class: `${Math.floor(event.status / 100)}xx`,
          }),
        );
      case 'attempt-ended':
        return attempts.inc({ operation: event.operation, mode: event.mode, outcome: event.outcome });
      case 'replayed':
        return replays.inc(operationOf(event.identity));
      case 'fingerprint-mismatch':
        return mismatches.inc(operationOf(event.identity));
      case 'conflict':
        return conflicts.inc(operationOf(event.identity));
      case 'lock-wait':
        return lockWait.observe(operationOf(event.identity), event.ms / 1000);
      case 'store-error':
        return storeErrors.inc(operationOf(event.identity));
      case 'fenced':
        return fenced.inc(operationOf(event.identity));
      case 'taken-over':
        return takeOvers.inc(operationOf(event.identity));
      case 'released':
        return released.inc(operationOf(event.identity));
      case 'unknown':
        return unknown.inc(operationOf(event.identity));
      case 'problem':
        return problems.inc(
          event.operation === undefined ? { code: event.code } : { operation: event.operation, code: event.code },
        );
      case 'raw-body-missing':
        // A warning about the setup, told once per operation: the log says it.
        return;
      default:
        return uncounted(event);
    }
  };
}

/** A new kind of event fails to compile here until it is given a metric or left out on purpose. */
function uncounted(_event: never): void {
  // Nothing to count.
}

/** The operation name only: bounded by the routes an application defines. */
function operationOf(identity: OperationIdentity | undefined): Labels {
  return identity === undefined ? {} : { operation: identity.operation };
}
