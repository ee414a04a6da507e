import { downstreamKey } from '../../src/modes/downstream-key.js';
import { fingerprint } from '../../src/core/fingerprint.js';
import type { HeaderValue } from '../../src/core/answer/reply.js';
import type { Completion } from '../../src/core/completion.js';
import type { OperationIdentity } from '../../src/core/identity.js';
import type { OperationMode, OperationRecord, RecordState } from '../../src/core/record.js';
import { defaultRetention } from '../../src/core/retention.js';
import { defaultPolicy } from '../../src/core/storage-policy.js';
import type { ActionConfig, OperatorTools } from '../../src/operator/operator-tools.js';
import type { StuckOperation } from '../../src/store/maintenance-store.js';
import type {
  ActionEntry,
  Actor,
  DeadLetterSummary,
  OperationSummary,
  OperationView,
  OperatorActionRecord,
  OperatorStore,
  Page,
  ParkedEvent,
  RecordVersion,
  UnknownActions,
} from '../../src/store/operator-store.js';
import type { RecordReader } from '../../src/store/record-reader.js';

/**
 * The operator seam held in memory, written from its interfaces alone: it
 * keeps records, dead letters and parked events, and applies the rules the
 * seam states (every action conditional on what the operator saw, recorded
 * with who and why). The console and the command line run over it as they
 * run over PostgreSQL.
 */

/** An operation as this store keeps it. */
interface Held {
  identity: OperationIdentity;
  state: RecordState;
  mode: OperationMode;
  attempt: number;
  fencingToken: number;
  createdAt: Date;
  finishedAt: Date | undefined;
  leaseOwner: string | undefined;
  leaseExpiresAt: Date | undefined;
  status: number | undefined;
  headers: Readonly<Record<string, HeaderValue>> | undefined;
  body: Uint8Array | undefined;
  reason: string | undefined;
  input: unknown;
  retriedAt: Date | undefined;
  failures: number;
  steps: { name: string; startedAt: Date; finishedAt: Date | undefined; fencingToken: number }[];
}

interface Parked {
  readonly id: string;
  readonly topic: string;
  attempts: number;
  state: 'dead' | 'pending';
  readonly createdAt: Date;
  parkedAt: Date | undefined;
}

interface ParkedWebhook {
  readonly receiver: string;
  readonly id: string;
  attempts: number;
  parkedAt: Date | undefined;
}

/** What a test writes into the store before it looks: the seam itself writes no record. */
export interface MemorySeed {
  /** A leased operation whose outcome is unknown, its input kept unless `resumable` is false, with a started step. */
  unknown(identity: OperationIdentity, options?: { readonly resumable?: boolean }): void;
  /** A completed operation that answered `status`. */
  completed(identity: OperationIdentity, status: number): void;
  /** A dead letter of the outbox; its id. */
  deadLetter(topic: string): string;
  /** A webhook event parked after failing. */
  parkedEvent(receiver: string, id: string): void;
}

export interface MemoryOperatorTools {
  readonly tools: OperatorTools<unknown>;
  readonly seed: MemorySeed;
}

const keyOf = (identity: OperationIdentity) => JSON.stringify([identity.tenant, identity.operation, identity.key]);
const microseconds = (at: Date) => at.toISOString().replace('Z', '000Z');
const seconds = (from: Date, to: Date) => (to.getTime() - from.getTime()) / 1000;

export function memoryOperatorTools(now: () => Date = () => new Date()): MemoryOperatorTools {
  const records = new Map<string, Held>();
  const actions: (OperatorActionRecord & { readonly subject: string })[] = [];
  const letters = new Map<string, Parked>();
  const events = new Map<string, ParkedWebhook>();
  let nextLetter = 1;

  const record = (entry: ActionEntry) => {
    const subject = 'identity' in entry.subject ? keyOf(entry.subject.identity) : entry.subject.messageId;
    actions.push({
      at: now(),
      actor: entry.actor,
      action: entry.action,
      reason: entry.reason,
      seen: entry.seen,
      detail: entry.detail ?? {},
      subject,
    });
  };
  const matches = (held: Held | undefined, seen: RecordVersion): held is Held =>
    held !== undefined && held.state === seen.state && held.fencingToken === seen.fencingToken;

  const summary = (held: Held): OperationSummary => ({
    identity: held.identity,
    state: held.state,
    mode: held.mode,
    attempt: held.attempt,
    fencingToken: held.fencingToken,
    createdAt: held.createdAt,
    finishedAt: held.finishedAt,
    leaseExpiresAt: held.leaseExpiresAt,
    status: held.status,
    reason: held.reason,
  });

  const paged = <T>(items: readonly T[], limit: number, after: string | undefined): Page<T> => {
    const from = after === undefined ? 0 : Number(after);
    const next = from + limit < items.length ? String(from + limit) : undefined;
    return { items: items.slice(from, from + limit), next };
  };

  const operators: OperatorStore = {
    async list(query) {
      const found = [...records.values()]
        .filter((held) => query.state === undefined || held.state === query.state)
        .filter((held) => query.tenant === undefined || held.identity.tenant === query.tenant)
        .filter((held) => query.operation === undefined || held.identity.operation === query.operation)
        .filter((held) =>
          query.key === undefined
            ? true
            : query.key.match === 'exact'
              ? held.identity.key === query.key.key
              : held.identity.key.startsWith(query.key.prefix),
        )
        .filter(
          (held) => query.olderThanSeconds === undefined || seconds(held.createdAt, now()) >= query.olderThanSeconds,
        )
        .sort((a, b) => keyOf(a.identity).localeCompare(keyOf(b.identity)))
        .map(summary);
      return Promise.resolve(paged(found, query.limit, query.after));
    },
    operation(identity, options = {}) {
      const held = records.get(keyOf(identity));
      if (held === undefined) return Promise.resolve(undefined);
      const view: OperationView = {
        ...summary(held),
        version: { state: held.state, fencingToken: held.fencingToken },
        fingerprint: Buffer.from(fingerprint(held.input ?? null))
          .toString('hex')
          .slice(0, 12),
        leaseOwner: held.leaseOwner,
        notBefore: undefined,
        failures: held.failures,
        lastError: undefined,
        retriedAt: held.retriedAt,
        headers: held.headers,
        resource: undefined,
        responseOmitted: false,
        bodyBytes: held.body?.byteLength,
        body: options.body === true ? held.body : undefined,
        resumable: held.input !== undefined,
        responseExpiresAt: undefined,
        expiresAt: undefined,
        steps: held.steps.map((step) => ({ ...step, downstreamKey: downstreamKey(identity, step.name) })),
        actions: actions.filter((action) => action.subject === keyOf(identity)),
      };
      return Promise.resolve(view);
    },
    successStatus(identity) {
      const done = [...records.values()].find(
        (held) =>
          held.identity.tenant === identity.tenant &&
          held.identity.operation === identity.operation &&
          held.state === 'completed' &&
          held.status !== undefined &&
          held.status < 300,
      );
      return Promise.resolve(done?.status);
    },
    activity: () => Promise.resolve([]),
    oldestUnfinished() {
      const unfinished = [...records.values()].filter(
        (held) => held.state === 'in_progress' || held.state === 'unknown',
      );
      const oldest = Math.min(...unfinished.map((held) => held.createdAt.getTime()));
      return Promise.resolve(unfinished.length === 0 ? undefined : (now().getTime() - oldest) / 1000);
    },
    deadLetters(query) {
      const dead: DeadLetterSummary[] = [...letters.values()]
        .filter((letter) => letter.state === 'dead' && letter.parkedAt !== undefined)
        .map((letter) => ({
          id: letter.id,
          topic: letter.topic,
          attempts: letter.attempts,
          lastError: 'broker refused',
          createdAt: letter.createdAt,
          parkedAt: letter.parkedAt!,
          version: microseconds(letter.parkedAt!),
        }));
      return Promise.resolve(paged(dead, query.limit, query.after));
    },
    parkedEvents(query) {
      const parked: ParkedEvent[] = [...events.values()]
        .filter((event) => event.parkedAt !== undefined)
        .map((event) => ({
          receiver: event.receiver,
          id: event.id,
          attempts: event.attempts,
          lastError: 'handler failed',
          receivedAt: event.parkedAt!,
          version: microseconds(event.parkedAt!),
        }));
      return Promise.resolve(paged(parked, query.limit, query.after));
    },
    purge(identity, seen, by: Actor) {
      const held = records.get(keyOf(identity));
      const leaseHeld = held?.state === 'in_progress' && (held.leaseExpiresAt?.getTime() ?? 0) > now().getTime();
      if (!matches(held, seen) || leaseHeld) return Promise.resolve(false);
      records.delete(keyOf(identity));
      record({ ...by, action: 'purge', subject: { identity }, seen: { ...seen } });
      return Promise.resolve(true);
    },
    requeue(id, seenVersion, by) {
      const letter = letters.get(id);
      if (letter?.state !== 'dead' || letter.parkedAt === undefined || microseconds(letter.parkedAt) !== seenVersion)
        return Promise.resolve(false);
      letter.state = 'pending';
      letter.attempts = 0;
      letter.parkedAt = undefined;
      record({ ...by, action: 'requeue', subject: { messageId: id }, seen: { parkedAt: seenVersion } });
      return Promise.resolve(true);
    },
    record(entry) {
      record(entry);
      return Promise.resolve();
    },
    requeueEvent(event, seenVersion, by) {
      const parked = events.get(`${event.receiver}/${event.id}`);
      if (parked?.parkedAt === undefined || microseconds(parked.parkedAt) !== seenVersion)
        return Promise.resolve(false);
      parked.parkedAt = undefined;
      parked.attempts = 0;
      record({ ...by, action: 'requeue', subject: { messageId: event.id }, seen: { parkedAt: seenVersion } });
      return Promise.resolve(true);
    },
  };

  const unknownActions: UnknownActions & RecordReader = {
    retryUnknown(identity, ownerToken, reason, fencingToken) {
      const held = records.get(keyOf(identity));
      if (held?.state !== 'unknown' || held.mode !== 'leased' || held.input === undefined)
        return Promise.resolve(false);
      if (fencingToken !== undefined && held.fencingToken !== fencingToken) return Promise.resolve(false);
      Object.assign(held, {
        state: 'in_progress',
        leaseOwner: ownerToken,
        leaseExpiresAt: now(),
        failures: 0,
        retriedAt: now(),
        reason,
      });
      return Promise.resolve(true);
    },
    resolveUnknown(identity, completion: Completion, reason, fencingToken) {
      const held = records.get(keyOf(identity));
      if (held?.state !== 'unknown') return Promise.resolve(false);
      if (fencingToken !== undefined && held.fencingToken !== fencingToken) return Promise.resolve(false);
      Object.assign(held, {
        state: completion.state,
        status: completion.reply.status,
        headers: completion.reply.headers,
        body: completion.reply.body,
        finishedAt: now(),
        reason,
        input: undefined,
      });
      return Promise.resolve(true);
    },
    read(identity) {
      const held = records.get(keyOf(identity));
      if (held === undefined) return Promise.resolve(undefined);
      const base = {
        identity,
        mode: held.mode,
        fingerprint: fingerprint(held.input ?? null),
        createdAt: held.createdAt,
        readAt: now(),
      };
      const read: OperationRecord =
        held.state === 'in_progress'
          ? {
              ...base,
              state: 'in_progress',
              leaseExpiresAt: held.leaseExpiresAt ?? now(),
              attempt: held.attempt,
              fencingToken: held.fencingToken,
            }
          : held.state === 'unknown'
            ? { ...base, state: 'unknown', reason: held.reason ?? '' }
            : held.state === 'tombstone'
              ? { ...base, state: 'tombstone', status: held.status ?? 0, resource: undefined }
              : {
                  ...base,
                  state: held.state,
                  response: { status: held.status ?? 0, headers: {}, body: held.body ?? new Uint8Array() },
                  responseOmitted: false,
                  completedAt: held.finishedAt ?? now(),
                  responseExpiresAt: now(),
                };
      return Promise.resolve(read);
    },
  };

  const config: ActionConfig<unknown> = {
    store: unknownActions,
    policy: defaultPolicy,
    retentionFor: () => defaultRetention,
  };

  const tools: OperatorTools<unknown> = {
    operators,
    config,
    health: {
      stats() {
        const held = [...records.values()];
        const inProgress = held.filter((h) => h.state === 'in_progress');
        const oldest = Math.min(...inProgress.map((h) => h.createdAt.getTime()));
        return Promise.resolve({
          oldestInProgressSeconds: inProgress.length === 0 ? undefined : (now().getTime() - oldest) / 1000,
          unknownOperations: held.filter((h) => h.state === 'unknown').length,
          expiredLeases: inProgress.filter((h) => (h.leaseExpiresAt?.getTime() ?? 0) <= now().getTime()).length,
          parkedWebhookEvents: [...events.values()].filter((e) => e.parkedAt !== undefined).length,
        });
      },
      stuck(query) {
        const stuck: StuckOperation[] = [...records.values()]
          .filter((h) => seconds(h.createdAt, now()) >= query.olderThanSeconds)
          .flatMap((h): StuckOperation[] => {
            const kind =
              h.state === 'unknown'
                ? ('unknown' as const)
                : h.state === 'in_progress' && (h.leaseExpiresAt?.getTime() ?? 0) <= now().getTime()
                  ? ('expired-lease' as const)
                  : undefined;
            if (kind === undefined) return [];
            return [
              {
                identity: h.identity,
                kind,
                mode: h.mode,
                attempt: h.attempt,
                createdAt: h.createdAt,
                ageSeconds: seconds(h.createdAt, now()),
                leaseExpiresAt: h.leaseExpiresAt,
                reason: h.reason,
                failures: h.failures,
                nextAttemptAt: undefined,
                lastError: undefined,
              },
            ];
          })
          .sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime());
        return Promise.resolve(stuck.slice(0, query.limit));
      },
      outboxBacklog() {
        const all = [...letters.values()];
        return Promise.resolve({
          pending: all.filter((l) => l.state === 'pending').length,
          dead: all.filter((l) => l.state === 'dead').length,
          oldestPendingSeconds: 0,
        });
      },
    },
  };

  const add = (identity: OperationIdentity, fields: Partial<Held>) =>
    records.set(keyOf(identity), {
      identity,
      state: 'completed',
      mode: 'leased',
      attempt: 1,
      fencingToken: 1,
      createdAt: now(),
      finishedAt: undefined,
      leaseOwner: undefined,
      leaseExpiresAt: undefined,
      status: undefined,
      headers: undefined,
      body: undefined,
      reason: undefined,
      input: undefined,
      retriedAt: undefined,
      failures: 0,
      steps: [],
      ...fields,
    });

  const seed: MemorySeed = {
    unknown(identity, options = {}) {
      add(identity, {
        state: 'unknown',
        reason: 'the provider did not answer the charge',
        input: options.resumable === false ? undefined : { amount: 900 },
        steps: [{ name: 'charge', startedAt: now(), finishedAt: undefined, fencingToken: 1 }],
      });
    },
    completed(identity, status) {
      add(identity, {
        state: 'completed',
        status,
        finishedAt: now(),
        headers: { 'content-type': 'application/json' },
        body: Buffer.from('{}'),
      });
    },
    deadLetter(topic) {
      const id = `00000000-0000-4000-8000-${String(nextLetter++).padStart(12, '0')}`;
      letters.set(id, { id, topic, attempts: 8, state: 'dead', createdAt: now(), parkedAt: now() });
      return id;
    },
    parkedEvent(receiver, id) {
      events.set(`${receiver}/${id}`, { receiver, id, attempts: 5, parkedAt: now() });
    },
  };

  return { tools, seed };
}
