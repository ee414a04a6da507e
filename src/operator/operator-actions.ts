import type { OperationIdentity } from '../core/identity.js';
import { resolveOperation } from '../leases/resolve.js';
import { retryOperation } from '../leases/retry.js';
import type { Actor, OperatorStore, RecordVersion, WebhookEventId } from '../store/operator-store.js';
import type { ActionConfig } from './operator-tools.js';

/** What an operator may do, each on the record as they saw it. */
export type OperatorAction =
  /** Resolves an unknown operation: retries of the key get this answer from then on. */
  | {
      readonly action: 'resolve';
      readonly identity: OperationIdentity;
      readonly seen: RecordVersion;
      readonly state: 'completed' | 'failed';
      readonly status: number;
      readonly body?: unknown;
      readonly location?: string;
    }
  /** Puts an unknown leased operation back into recovery. */
  | { readonly action: 'retry'; readonly identity: OperationIdentity; readonly seen: RecordVersion }
  /** Deletes the record: a late retry of the key then runs the operation again. */
  | { readonly action: 'purge'; readonly identity: OperationIdentity; readonly seen: RecordVersion }
  /** Sends a dead letter of the outbox again; `seen` is its `version`. */
  | { readonly action: 'requeue'; readonly messageId: string; readonly seen: string }
  /** Processes a parked webhook event again; `seen` is its `version`. */
  | { readonly action: 'requeue-event'; readonly event: WebhookEventId; readonly seen: string };

/**
 * `changed`: the record is not what the operator saw (another state, another
 * fencing token, gone): nothing was done. `not-resumable`: an unknown
 * operation nothing can run again (transparent, or its input is gone).
 */
export type ActionResult =
  { readonly done: true } | { readonly done: false; readonly why: 'changed' | 'not-resumable' };

/** What actions need: the application's configuration (policy, retention, its store) and the operators' store; an `OperatorTools` is one. */
export interface ActionContext<Tx> {
  readonly config: ActionConfig<Tx>;
  readonly operators: OperatorStore;
}

/** Runs one operator action, only on the record as it was seen, and records who did it and why. */
export async function runOperatorAction<Tx>(
  context: ActionContext<Tx>,
  action: OperatorAction,
  by: Actor,
): Promise<ActionResult> {
  const { config, operators } = context;
  switch (action.action) {
    case 'resolve': {
      if (action.seen.state !== 'unknown') return changed;
      const headers: Record<string, string> = action.location === undefined ? {} : { location: action.location };
      const reply = { status: action.status, body: action.body, headers };
      const result = await resolveOperation(config, action.identity, {
        state: action.state,
        reply,
        reason: by.reason,
        fencingToken: action.seen.fencingToken,
      });
      if (!result.resolved) return changed;
      await recordOn(operators, action, by, { state: action.state, status: action.status });
      return done;
    }
    case 'retry': {
      if (action.seen.state !== 'unknown') return changed;
      const result = await retryOperation(config, action.identity, by.reason, {
        fencingToken: action.seen.fencingToken,
      });
      if (!result.retried) {
        const now = await operators.operation(action.identity);
        const same = now?.state === 'unknown' && now.fencingToken === action.seen.fencingToken;
        return same && result.why === 'not-resumable' ? { done: false, why: 'not-resumable' } : changed;
      }
      await recordOn(operators, action, by);
      return done;
    }
    case 'purge':
      return (await operators.purge(action.identity, action.seen, by)) ? done : changed;
    case 'requeue':
      return (await operators.requeue(action.messageId, action.seen, by)) ? done : changed;
    case 'requeue-event':
      return (await operators.requeueEvent(action.event, action.seen, by)) ? done : changed;
  }
}

/** Records an action done through the application's store (resolve, retry) with the version it was done on. */
const recordOn = (
  operators: OperatorStore,
  action: Extract<OperatorAction, { action: 'resolve' | 'retry' }>,
  by: Actor,
  detail?: Readonly<Record<string, unknown>>,
) =>
  operators.record({
    action: action.action,
    actor: by.actor,
    reason: by.reason,
    subject: { identity: action.identity },
    seen: { state: action.seen.state, fencingToken: action.seen.fencingToken },
    ...(detail === undefined ? {} : { detail }),
  });
const done: ActionResult = { done: true };
const changed: ActionResult = { done: false, why: 'changed' };
