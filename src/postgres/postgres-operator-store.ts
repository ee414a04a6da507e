import { RetrysafeError } from '../core/errors.js';
import { extend } from '../core/extend.js';
import type { OperationIdentity } from '../core/identity.js';
import type { OperationMode, RecordState } from '../core/record.js';
import { downstreamKey } from '../modes/downstream-key.js';
import type {
  OperationSummary,
  OperatorActionRecord,
  OperatorStore,
  Page,
  UnknownActions,
} from '../store/operator-store.js';
import { isParkedVersion, operationQueryRules } from '../store/operator-rules.js';
import { checkOptions } from '../core/option-rules.js';
import type { SqlDatabase, Statement } from '../store/sql-client.js';
import { ACTIVITY_KINDS, type ActivityKind } from '../store/activity-store.js';
import { activityStore } from './postgres-activity-store.js';
import {
  BYTE_ORDERED,
  DEAD_LETTER_PAGE,
  LIST_BY_IDENTITY,
  LIST_BY_KEY,
  LIST_LEASED,
  LIST_UNKNOWN,
  OPERATION_ACTIONS,
  OPERATION_VIEW,
  PARKED_EVENT_PAGE,
  PURGE,
  RECORD,
  REQUEUE,
  REQUEUE_EVENT,
  RESOLVE_UNKNOWN,
  resolveUnknownValues,
  RETRY_UNKNOWN,
  retryUnknownValues,
  SUCCESS_STATUS,
} from './sql/operator.js';
import { ids } from './sql/record-row.js';
import { refusedShape, storeChanged, storeRows } from './store-rows.js';
import { INSPECT_STEPS, OLDEST_UNFINISHED } from './sql/inspect.js';

interface SummaryRow {
  readonly tenant: string;
  readonly operation: string;
  readonly key: string;
  readonly state: RecordState;
  readonly mode: OperationMode;
  readonly attempt: number;
  readonly fencing_token: number;
  readonly created_at: Date;
  readonly finished_at: Date | null;
  readonly lease_expires_at: Date | null;
  readonly response_status: number | null;
  readonly reason: string | null;
  /** The exact time a walk by time stands at. */
  readonly position?: string;
}

export interface ViewRow extends SummaryRow {
  readonly fingerprint: Uint8Array;
  readonly owner_token: string | null;
  readonly not_before: Date | null;
  readonly failures: number;
  readonly last_error: string | null;
  readonly retried_at: Date | null;
  readonly response_headers: Record<string, string | string[]> | null;
  readonly resource_ref: string | null;
  readonly response_omitted: boolean;
  readonly body_bytes: number | null;
  readonly response_body: Uint8Array | null;
  readonly resumable: boolean;
  readonly response_expires_at: Date | null;
  readonly expires_at: Date | null;
}

/** A step as the operator seam reads it, without its result. */
export interface StepRow {
  readonly step: string;
  readonly started_at: Date;
  readonly finished_at: Date | null;
  readonly fencing_token: number;
}

/**
 * One record and its steps, as the operator seam's `operation()` reads them
 * (and the deprecated `MaintenanceStore.inspect`, which draws on the same
 * read); the body only when asked for. Undefined when there is no record.
 */
export async function readOperation<Tx>(
  database: SqlDatabase<Tx>,
  identity: OperationIdentity,
  body: boolean,
): Promise<{ readonly row: ViewRow; readonly steps: readonly StepRow[] } | undefined> {
  const [row] = await storeRows<ViewRow>(database, OPERATION_VIEW, [...ids(identity), body]);
  if (row === undefined) return undefined;
  return { row, steps: await storeRows<StepRow>(database, INSPECT_STEPS, ids(identity)) };
}

/** Where a walk stands: the sort columns of the last row of the page before. */
type Cursor = readonly string[];

/**
 * The actions on an unknown operation on PostgreSQL, each one conditional
 * statement; `postgresStore()` serves them, so the application's decorators
 * apply to them.
 */
export function unknownActions<Tx>(database: SqlDatabase<Tx>): UnknownActions {
  const changed = (text: Statement, values: readonly unknown[]): Promise<boolean> =>
    storeChanged(database, text, values);
  return {
    retryUnknown: (identity, ownerToken, reason, fencingToken) =>
      changed(RETRY_UNKNOWN, retryUnknownValues(identity, ownerToken, reason, fencingToken)),
    resolveUnknown: (identity, completion, reason, fencingToken) =>
      changed(RESOLVE_UNKNOWN, resolveUnknownValues(identity, completion, reason, fencingToken)),
  };
}

/** A key searched without its operation, on Citus. */
const unsupportedKeySearch = refusedShape(
  'A search by key without an operation',
  'it walks the primary key from one tenant and operation to the next with a recursive query, which Citus does not run on a distributed retrysafe_operations. Name the operation too. See docs/scaling.md.',
);

/** The operators' statements on PostgreSQL; each read is one statement, each action one conditional statement. */
export function operatorStore<Tx>(database: SqlDatabase<Tx>): OperatorStore {
  const run = <Row>(text: string, values: readonly unknown[]): Promise<Row[]> => storeRows<Row>(database, text, values);
  const activities = activityStore(database);
  let byteOrdered: Promise<boolean> | undefined;
  const bytewise = async () => {
    byteOrdered ??= run<{ byte_ordered: boolean }>(BYTE_ORDERED, []).then(([row]) => row?.byte_ordered === true);
    return byteOrdered;
  };

  return {
    async list(query) {
      checkOptions(operationQueryRules, query);
      const limit = query.limit;
      const after = readCursor(query.after);
      const prefix = query.key?.match === 'prefix' ? query.key.prefix : null;
      const byTime = query.state === 'unknown' || query.state === 'in_progress';
      const filters = [
        query.tenant ?? null,
        query.operation ?? null,
        query.key?.match === 'exact' ? query.key.key : null,
        prefix,
        prefix !== null && prefix !== '' && (await bytewise()) ? following(prefix) : null,
        // A walk by time says its state itself.
        byTime ? null : (query.state ?? null),
        query.olderThanSeconds ?? null,
      ];
      // One more row than asked: whether there is a next page.
      if (byTime) {
        const position = after ?? ['-infinity', '', '', ''];
        const rows = await run<SummaryRow>(query.state === 'unknown' ? LIST_UNKNOWN : LIST_LEASED, [
          ...filters,
          ...position,
          limit + 1,
        ]);
        return page(rows, limit, (row) => [row.position ?? '', row.tenant, row.operation, row.key], summary);
      }
      // A tenant's first page starts at the tenant: a walk by key then descends straight into it.
      const position = after ?? [query.tenant ?? '', '', ''];
      const byKey = query.operation === undefined && query.key !== undefined;
      const walk = run<SummaryRow>(byKey ? LIST_BY_KEY : LIST_BY_IDENTITY, [...filters, ...position, limit + 1]);
      const rows = await (byKey ? walk.catch(unsupportedKeySearch) : walk);
      return page(rows, limit, (row) => [row.tenant, row.operation, row.key], summary);
    },

    async operation(identity, options = {}) {
      const [found, actions] = await Promise.all([
        readOperation(database, identity, options.body === true),
        run<{
          at: Date;
          actor: string;
          action: OperatorActionRecord['action'];
          reason: string;
          seen: Record<string, unknown>;
          detail: Record<string, unknown>;
        }>(OPERATION_ACTIONS, ids(identity)),
      ]);
      if (found === undefined) return undefined;
      const { row, steps } = found;
      return extend(summary(row), {
        version: { state: row.state, fencingToken: row.fencing_token },
        fingerprint: Buffer.from(row.fingerprint).toString('hex').slice(0, 12),
        leaseOwner: row.owner_token ?? undefined,
        notBefore: row.not_before ?? undefined,
        failures: row.failures,
        lastError: row.last_error ?? undefined,
        retriedAt: row.retried_at ?? undefined,
        headers: row.response_headers ?? undefined,
        resource: row.resource_ref ?? undefined,
        responseOmitted: row.response_omitted,
        bodyBytes: row.body_bytes ?? undefined,
        body: row.response_body ?? undefined,
        resumable: row.resumable,
        responseExpiresAt: row.response_expires_at ?? undefined,
        expiresAt: row.expires_at ?? undefined,
        steps: steps.map((step) => ({
          name: step.step,
          startedAt: step.started_at,
          finishedAt: step.finished_at ?? undefined,
          fencingToken: step.fencing_token,
          downstreamKey: downstreamKey(identity, step.step),
        })),
        actions,
      });
    },

    async successStatus(identity) {
      const [row] = await run<{ response_status: number }>(SUCCESS_STATUS, [identity.tenant, identity.operation]);
      return row?.response_status;
    },

    async activity(hours) {
      const byHour = new Map<number, Record<ActivityKind, number>>();
      for (const count of await activities.activity(hours)) {
        const start = count.hour.getTime();
        const counts = byHour.get(start) ?? noActivity();
        counts[count.kind] += count.n;
        byHour.set(start, counts);
      }
      return [...byHour].map(([start, counts]) => ({ start: new Date(start), counts }));
    },

    async oldestUnfinished() {
      const [row] = await run<{ oldest_unfinished_seconds: number | null }>(OLDEST_UNFINISHED, []);
      return row?.oldest_unfinished_seconds ?? undefined;
    },

    async deadLetters(query) {
      const limit = pageLimit(query.limit);
      const [time = null, id = null] = readCursor(query.after) ?? [];
      const rows = await run<{
        id: string;
        topic: string;
        attempts: number;
        last_error: string | null;
        created_at: Date;
        parked_at: Date;
        position: string;
      }>(DEAD_LETTER_PAGE, [limit + 1, time, id]);
      const items = rows.map((row) => ({
        id: row.id,
        topic: row.topic,
        attempts: row.attempts,
        lastError: row.last_error ?? undefined,
        createdAt: row.created_at,
        parkedAt: row.parked_at,
        version: row.position,
      }));
      return page(
        items,
        limit,
        (row) => [row.version, row.id],
        (row) => row,
      );
    },

    async parkedEvents(query) {
      const limit = pageLimit(query.limit);
      const [time = null, receiver = null, id = null] = readCursor(query.after) ?? [];
      const rows = await run<{
        receiver: string;
        id: string;
        attempts: number;
        last_error: string | null;
        received_at: Date;
        position: string;
        version: string;
      }>(PARKED_EVENT_PAGE, [limit + 1, time, receiver, id]);
      const items = rows.map((row) => ({
        receiver: row.receiver,
        id: row.id,
        attempts: row.attempts,
        lastError: row.last_error ?? undefined,
        receivedAt: row.received_at,
        version: row.version,
        position: row.position,
      }));
      return page(
        items,
        limit,
        (row) => [row.position, row.receiver, row.id],
        ({ position: _position, ...event }) => event,
      );
    },

    async purge(identity, seen, by) {
      return (await run(PURGE, [...ids(identity), seen.state, seen.fencingToken, by.actor, by.reason])).length > 0;
    },

    async requeue(id, seenVersion, by) {
      if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(id)) return false;
      // Only a version this store wrote: anything else names no dead letter.
      if (!isParkedVersion(seenVersion)) return false;
      return (await run(REQUEUE, [id, seenVersion, by.actor, by.reason])).length > 0;
    },

    async record(entry) {
      const identity: OperationIdentity | undefined = 'identity' in entry.subject ? entry.subject.identity : undefined;
      await run(RECORD, [
        entry.actor,
        entry.action,
        identity?.tenant ?? null,
        identity?.operation ?? null,
        identity?.key ?? null,
        entry.reason,
        JSON.stringify(entry.seen),
        JSON.stringify(entry.detail ?? {}),
      ]);
    },

    async requeueEvent(event, seenVersion, by) {
      // Only a version this store wrote: anything else names no parked event.
      if (seenVersion !== '' && !isParkedVersion(seenVersion)) return false;
      return (await run(REQUEUE_EVENT, [event.receiver, event.id, seenVersion, by.actor, by.reason])).length > 0;
    },
  };
}

function summary(row: SummaryRow): OperationSummary {
  return {
    identity: { tenant: row.tenant, operation: row.operation, key: row.key },
    state: row.state,
    mode: row.mode,
    attempt: row.attempt,
    fencingToken: row.fencing_token,
    createdAt: row.created_at,
    finishedAt: row.finished_at ?? undefined,
    leaseExpiresAt: row.lease_expires_at ?? undefined,
    status: row.response_status ?? undefined,
    reason: row.reason ?? undefined,
  };
}

/** The first `limit` of `rows` (one more was read, to tell whether a next page exists), and the cursor after the last. */
function page<Row, Item>(
  rows: readonly Row[],
  limit: number,
  position: (row: Row) => Cursor,
  convert: (row: Row) => Item,
): Page<Item> {
  const shown = rows.slice(0, limit);
  const last = shown.at(-1);
  return {
    items: shown.map(convert),
    next: rows.length > limit && last !== undefined ? writeCursor(position(last)) : undefined,
  };
}

/** Opaque to callers: the sort columns, as base64url JSON. */
function writeCursor(cursor: Cursor): string {
  return Buffer.from(JSON.stringify(cursor)).toString('base64url');
}

function readCursor(text: string | undefined): Cursor | undefined {
  if (text === undefined || text === '') return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(text, 'base64url').toString('utf8'));
  } catch {
    parsed = undefined;
  }
  if (!Array.isArray(parsed) || !parsed.every((part) => typeof part === 'string'))
    throw new RetrysafeError('misuse', 'This page cursor was not made by retrysafe.');
  return parsed;
}

/** The first string after every string that starts with `prefix`, in byte order: the prefix with its last character raised. */
function following(prefix: string): string {
  const last = prefix.charCodeAt(prefix.length - 1);
  return prefix.slice(0, -1) + String.fromCharCode(last + 1);
}

/** A page's size, checked like the operator query's. */
function pageLimit(limit: number): number {
  checkOptions({ limit: operationQueryRules.limit }, { limit }, 'page.');
  return limit;
}

/** An hour's counts before any is added: every kind at 0. */
function noActivity(): Record<ActivityKind, number> {
  return Object.fromEntries(ACTIVITY_KINDS.map((kind) => [kind, 0])) as Record<ActivityKind, number>;
}
